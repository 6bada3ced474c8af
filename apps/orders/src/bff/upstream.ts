import { Agent, errors, request } from 'undici';
import { UpstreamUnavailableError } from '../errors.js';

export interface UpstreamResponse {
  statusCode: number;
  /** The JSON body, byte for byte as the API sent it. */
  body: Buffer;
}

/** Far above any orders list; a larger answer is a fault upstream, not something to buffer. */
const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/**
 * The BFF's client for the orders API (UPSTREAM_API_URL). One pooled keep-alive agent for the
 * process, so BFF calls reuse connections instead of paying a TCP handshake each. Every call is
 * bounded by `timeoutMs` (connect, headers and body, and overall).
 */
export class OrdersApiClient {
  readonly #agent: Agent;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {
    this.#agent = new Agent({
      connections: 64,
      keepAliveTimeout: 10_000,
      connect: { timeout: timeoutMs },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      maxResponseSize: MAX_RESPONSE_BYTES,
    });
  }

  /** `GET {UPSTREAM_API_URL}` with the user's access token; network failures become 502/504. */
  async listOrders(accessToken: string, requestId: string): Promise<UpstreamResponse> {
    try {
      const response = await request(this.url, {
        method: 'GET',
        dispatcher: this.#agent,
        headers: {
          authorization: `Bearer ${accessToken}`,
          accept: 'application/json',
          'x-request-id': requestId,
        },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const body = Buffer.from(await response.body.arrayBuffer());
      const contentType = String(response.headers['content-type'] ?? '');
      // An empty body (204) passes; anything else must be the API's JSON, not a proxy's HTML page.
      if (body.length > 0 && !/^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
        throw new UpstreamUnavailableError('not-json');
      }
      return { statusCode: response.statusCode, body };
    } catch (error) {
      if (error instanceof UpstreamUnavailableError) throw error;
      throw new UpstreamUnavailableError(isTimeout(error) ? 'timeout' : 'unreachable');
    }
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}

function isTimeout(error: unknown): boolean {
  return (
    error instanceof errors.ConnectTimeoutError ||
    error instanceof errors.HeadersTimeoutError ||
    error instanceof errors.BodyTimeoutError ||
    (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) ||
    error instanceof errors.RequestAbortedError
  );
}
