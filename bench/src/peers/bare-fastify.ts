/**
 * Ceilings: bare Fastify routes with no plugins. Whatever our servers do on top of HTTP is measured
 * against these on the same machine with the same load generator.
 * - `GET /hello`: a small JSON body, the HTTP ceiling of every auth workload.
 * - `POST /token-floor`: the least a client-credentials token endpoint can do, the floor of
 *   `cc-jwt`: parse the same form body, sign one ES256 JWT of the same claims with
 *   node:crypto on a cached key (header segment encoded once), answer the same JSON with
 *   `cache-control: no-store`. No client authentication, scope or audience policy, audit, metrics,
 *   logging or security check of any kind: it is a measuring stick, not a server.
 * Run as its own process: `node --import tsx src/peers/bare-fastify.ts` with `PORT`.
 */
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { parse as parseForm } from 'node:querystring';
import Fastify from 'fastify';
import { exitWithParent } from './peer-config.js';

const app = Fastify({ logger: false });
app.addContentTypeParser(
  'application/x-www-form-urlencoded',
  { parseAs: 'string' },
  (_request, body, done) => {
    done(null, parseForm(body as string));
  },
);
app.get('/health/ready', async () => ({ status: 'ok' }));
app.get('/hello', async () => ({ hello: 'world' }));

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const issuer = `http://127.0.0.1:${process.env.PORT}`;
const encodedHeader = Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'floor', typ: 'at+jwt' })).toString(
  'base64url',
);
const TOKEN_TTL_SECONDS = 300;

app.post('/token-floor', async (request, reply) => {
  const form = request.body as Record<string, string | undefined>;
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: issuer,
    sub: 'bench-cc',
    aud: form.resource,
    client_id: 'bench-cc',
    scope: form.scope,
    iat: now,
    exp: now + TOKEN_TTL_SECONDS,
    jti: randomUUID(),
  };
  const signingInput = `${encodedHeader}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const signature = sign('sha256', Buffer.from(signingInput), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return reply.header('cache-control', 'no-store').send({
    access_token: `${signingInput}.${signature.toString('base64url')}`,
    token_type: 'Bearer',
    expires_in: TOKEN_TTL_SECONDS,
    scope: form.scope,
  });
});

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
exitWithParent(() => app.close());
