import { createServer, type Server } from 'node:http';

/** What the stand-in API answers with for a valid token. */
export const SAMPLE_ORDERS = [
  { id: 7, quantity: 2, total: '19.98', status: 'created', createdAt: '2026-11-21T10:15:00.000Z' },
  { id: 12, quantity: 1, total: '9.99', status: 'created', createdAt: '2026-11-22T08:00:30.000Z' },
];

export interface OrdersApi {
  readonly url: string;
  /** Every bearer token presented, in order. */
  readonly tokens: string[];
  close(): Promise<void>;
}

/**
 * A stand-in for the orders service's `GET /orders` (apps/orders): it accepts a bearer token only
 * when the authorization server's introspection endpoint (RFC 7662, authenticated as the
 * `orders-api` resource) says it is active, addressed to `orders-api` and carries `orders.read`;
 * otherwise 401 with an RFC 6750 challenge, as the real service does.
 */
export async function startOrdersApi(
  issuer: string,
  resource: { id: string; secret: string },
): Promise<OrdersApi> {
  const tokens: string[] = [];
  const basic = `Basic ${Buffer.from(`${resource.id}:${resource.secret}`).toString('base64')}`;
  const server: Server = createServer(async (request, response) => {
    const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/.exec(request.headers.authorization ?? '');
    if (request.method !== 'GET' || request.url !== '/orders') {
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"statusCode":404,"message":"Not Found"}');
      return;
    }
    if (!match) {
      response.writeHead(401, { 'www-authenticate': 'Bearer realm="orders-api"' }).end();
      return;
    }
    tokens.push(match[1]!);
    const introspection = await fetch(`${issuer}/introspect`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: match[1]! }).toString(),
    }).then(
      (answer) => answer.json() as Promise<{ active: boolean; aud?: string | string[]; scope?: string }>,
    );
    const audience = [introspection.aud ?? []].flat();
    if (
      !introspection.active ||
      !audience.includes(resource.id) ||
      !introspection.scope?.split(' ').includes('orders.read')
    ) {
      response
        .writeHead(401, {
          'content-type': 'application/json',
          'www-authenticate': 'Bearer realm="orders-api", error="invalid_token"',
        })
        .end('{"statusCode":401,"message":"The access token is invalid"}');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(SAMPLE_ORDERS));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    tokens,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
