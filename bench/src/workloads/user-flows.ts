/**
 * Material minted through the real browser path before a timed run: codes for `code`, refresh
 * tokens for `refresh`, a user access token for `orders-list`.
 */
import {
  authorizeThroughPages,
  type CodeFlowSettings,
  CookieJar,
  exchangeCode,
  type IssuedCode,
  type TokenResponse,
} from '../oauth-flow.js';

/** Authorization codes live 60 s by default: issuing stops early so none expires before its turn. */
const CODE_ISSUE_BUDGET_MS = 35_000;

export interface CodePool {
  codes: IssuedCode[];
  /** Codes per second the issuing achieved (the SSO /authorize path under light concurrency). */
  issueRate: number;
  /** True when the time budget, not the requested count, ended the issuing. */
  truncated: boolean;
}

/**
 * Pre-issues up to `count` codes with `concurrency` parallel browsers; each logs in once, then
 * rides its single sign-on session through /authorize. Oldest first: they are spent in that order.
 */
export async function issueCodePool(
  settings: CodeFlowSettings,
  count: number,
  concurrency = 8,
): Promise<CodePool> {
  const codes: IssuedCode[] = [];
  const started = Date.now();
  let claimed = 0;
  let truncated = false;
  const worker = async () => {
    const jar = new CookieJar();
    while (claimed < count) {
      if (Date.now() - started > CODE_ISSUE_BUDGET_MS) {
        truncated = true;
        return;
      }
      claimed++;
      codes.push(await authorizeThroughPages(settings, jar));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, worker));
  const seconds = Math.max((Date.now() - started) / 1000, 0.001);
  return { codes, issueRate: codes.length / seconds, truncated };
}

export async function issueUserTokens(
  settings: CodeFlowSettings,
  count: number,
  concurrency = 8,
): Promise<TokenResponse[]> {
  const pool = await issueCodePool(settings, count, concurrency);
  if (pool.codes.length < count)
    throw new Error(`only ${pool.codes.length} of ${count} codes could be issued in time`);
  const tokens: TokenResponse[] = [];
  const queue = [...pool.codes];
  const worker = async () => {
    for (let issued = queue.shift(); issued; issued = queue.shift())
      tokens.push(await exchangeCode(settings, issued));
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return tokens;
}
