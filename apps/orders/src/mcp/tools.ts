import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AppDatabase } from '../db/client.js';
import { DomainError } from '../errors.js';
import { placeOrder } from '../place-order.js';
import { listOrdersByEmail } from '../repositories/orders.js';
import { ORDERS_READ_SCOPE, ORDERS_WRITE_SCOPE } from '../routes/orders.js';
import { MAX_INT4 } from '../schemas/common.js';

/**
 * The tools of the orders MCP server and the scope each needs: the one table the route reads to
 * refuse a call with 403 `insufficient_scope` (MCP authorization, "Scope Challenge Handling";
 * RFC 6750 §3.1) before the SDK runs it, and `registerOrderTools` reads to register them.
 */
export const TOOL_SCOPES = {
  list_orders: ORDERS_READ_SCOPE,
  place_order: ORDERS_WRITE_SCOPE,
} as const satisfies Record<string, string>;

export type ToolName = keyof typeof TOOL_SCOPES;

export function isToolName(name: unknown): name is ToolName {
  return typeof name === 'string' && Object.hasOwn(TOOL_SCOPES, name);
}

/** What a tool acts with: the database and the user the access token names, never a client-chosen one. */
export interface ToolContext {
  db: AppDatabase;
  orderDb: AppDatabase;
  /** The token's `email` claim, lower-cased: the user the tools act for. */
  email: string;
  unitPriceCents: bigint;
  txTimeoutMs: number;
  /** Where an unexpected failure is logged; the caller sees a generic message only. */
  logFailure: (error: unknown) => void;
}

/** Registers both tools on `server`, each acting for `context.email`. */
export function registerOrderTools(server: McpServer, context: ToolContext): void {
  server.registerTool(
    'list_orders',
    {
      title: 'List my orders',
      description: `The orders of the signed-in user, oldest first (scope ${TOOL_SCOPES.list_orders}).`,
      annotations: { readOnlyHint: true },
    },
    async () =>
      toolResult(context, async () => {
        const orders = await listOrdersByEmail(context.db, context.email);
        return {
          orders: orders.map((order) => ({ ...order, createdAt: order.createdAt.toISOString() })),
        };
      }),
  );
  server.registerTool(
    'place_order',
    {
      title: 'Place an order',
      description: `Places an order of \`quantity\` items for the signed-in user (scope ${TOOL_SCOPES.place_order}).`,
      inputSchema: { quantity: z.number().int().min(1).max(MAX_INT4) },
      annotations: { readOnlyHint: false, idempotentHint: false },
    },
    async ({ quantity }) =>
      toolResult(context, async () => {
        const order = await placeOrder(
          context.orderDb,
          { email: context.email, quantity },
          { unitPriceCents: context.unitPriceCents, txTimeoutMs: context.txTimeoutMs },
        );
        return { order };
      }),
  );
}

/**
 * MCP "Tools", error handling: a failure of the tool itself is a result with `isError`, so the
 * model sees it. Only a DomainError's message is public; anything else is logged and answered
 * with a generic text.
 */
async function toolResult(
  context: ToolContext,
  run: () => Promise<Record<string, unknown>>,
): Promise<CallToolResult> {
  try {
    const structuredContent = await run();
    return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
  } catch (error) {
    const text = error instanceof DomainError ? error.message : 'The tool failed; try again later';
    if (!(error instanceof DomainError)) context.logFailure(error);
    return { content: [{ type: 'text', text }], isError: true };
  }
}
