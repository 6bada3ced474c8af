import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { isToolName, registerOrderTools, TOOL_SCOPES } from '../mcp/tools.js';
import type { VerifiedAccessToken } from '../oidc/access-token.js';
import { mcpSchema } from '../schemas/mcp.js';

/** How this server names itself in the MCP `initialize` answer. */
const SERVER_INFO = { name: 'orders', version: '0.7.0' };

/**
 * `POST /mcp`: a Model Context Protocol server over the Streamable HTTP transport, stateless (no
 * `Mcp-Session-Id`: a fresh server per request, so any instance answers any request). It sits in
 * the bearer area (src/routes/guarded-areas.ts): the access token was verified for RESOURCE_ID
 * before this runs, and it is never sent on anywhere (MCP authorization, "Access Token Privilege
 * Restriction": no token passthrough). Each tool needs its own scope (`TOOL_SCOPES`).
 */
export const mcpRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/mcp', { schema: mcpSchema }, async (request, reply) => {
    const token = request.accessToken;
    if (token === null) throw new Error('POST /mcp is served outside the bearer area');
    requireToolScopes(app, request.body, token);
    const email = token.email;
    if (email === undefined) {
      throw app.bearerTokenError('invalid_token', 'The access token carries no email claim', schemeOf(token));
    }
    const server = new McpServer(SERVER_INFO);
    registerOrderTools(server, {
      db: app.db,
      orderDb: app.orderDb,
      email,
      unitPriceCents: app.config.orderUnitPriceCents,
      txTimeoutMs: app.config.orderTxTimeoutMs,
      logFailure: (error) => request.log.error({ err: error }, 'MCP tool failed'),
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    handOver(reply);
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });
};

/**
 * RFC 6750 §3.1 / MCP authorization "Scope Challenge Handling": a `tools/call` of a tool whose
 * scope the token lacks is 403 `insufficient_scope` naming that scope, before any tool runs.
 */
function requireToolScopes(app: FastifyInstance, body: unknown, token: VerifiedAccessToken): void {
  const messages = Array.isArray(body) ? body : [body];
  for (const message of messages) {
    const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
    if (method !== 'tools/call' || !isToolName(params?.name)) continue;
    const scope = TOOL_SCOPES[params.name];
    if (!token.scopes.includes(scope)) {
      throw app.bearerTokenError(
        'insufficient_scope',
        `The tool ${params.name} needs the scope ${scope}`,
        schemeOf(token),
        scope,
      );
    }
  }
}

const schemeOf = (token: VerifiedAccessToken) => (token.jkt === undefined ? 'Bearer' : 'DPoP');

/** The SDK writes the response itself: headers set so far (request id, security headers) go with it. */
function handOver(reply: FastifyReply): void {
  reply.hijack();
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[]);
  }
}
