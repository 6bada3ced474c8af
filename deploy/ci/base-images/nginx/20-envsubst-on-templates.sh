#!/bin/sh
# The official nginx image's template step: every $NGINX_ENVSUBST_TEMPLATE_DIR/**/*.template is
# rendered into $NGINX_ENVSUBST_OUTPUT_DIR (same relative path, suffix dropped) with envsubst,
# which replaces only ${NAME}s of variables set in the environment, so nginx's own $variables stay.
set -e
template_dir="${NGINX_ENVSUBST_TEMPLATE_DIR:-/etc/nginx/templates}"
suffix="${NGINX_ENVSUBST_TEMPLATE_SUFFIX:-.template}"
output_dir="${NGINX_ENVSUBST_OUTPUT_DIR:-/etc/nginx/conf.d}"
filter="${NGINX_ENVSUBST_FILTER:-}"

[ -d "$template_dir" ] || exit 0
if [ ! -w "$output_dir" ]; then
  echo "$0: ERROR: $template_dir exists, but $output_dir is not writable" >&2
  exit 0
fi
defined_envs=$(printf '${%s} ' $(awk "END { for (name in ENVIRON) { print ( name ~ /${filter}/ ) ? name : \"\" } }" </dev/null))
find "$template_dir" -follow -type f -name "*$suffix" -print | while read -r template; do
  relative_path="${template#"$template_dir/"}"
  output_path="$output_dir/${relative_path%"$suffix"}"
  mkdir -p "$(dirname "$output_path")"
  echo "$0: rendering $template to $output_path"
  envsubst "$defined_envs" <"$template" >"$output_path"
done
