import { Type } from '@sinclair/typebox';

/** RFC 9728 §2: the members this resource publishes. */
const ProtectedResourceMetadata = Type.Object({
  resource: Type.String(),
  authorization_servers: Type.Array(Type.String()),
  scopes_supported: Type.Array(Type.String()),
  bearer_methods_supported: Type.Array(Type.String()),
  dpop_signing_alg_values_supported: Type.Array(Type.String()),
});

export const protectedResourceMetadataSchema = { response: { 200: ProtectedResourceMetadata } };
