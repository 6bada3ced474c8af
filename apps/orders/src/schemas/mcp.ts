import { Type } from '@sinclair/typebox';
import { ErrorResponse, guardedErrorResponses } from './errors.js';

/** JSON-RPC 2.0 (MCP "Base Protocol"): the SDK's transport validates the message itself. */
const JsonRpcMessage = Type.Object({ jsonrpc: Type.Literal('2.0') }, { additionalProperties: true });

export const mcpSchema = {
  body: Type.Union([JsonRpcMessage, Type.Array(JsonRpcMessage)]),
  response: { ...guardedErrorResponses, 503: ErrorResponse },
};
