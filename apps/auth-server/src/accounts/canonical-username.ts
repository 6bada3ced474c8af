/**
 * The name a person is counted under before we know which account they mean (README "Security
 * and operations": what a directory username matches). A directory finds its entry ignoring case
 * and runs of spaces (`uid` is `caseIgnoreMatch`, RFC 4517 §4.2.11, which also folds insignificant
 * spaces, RFC 4518 §2.6.1), so `dana`, ` Dana ` and `DANA` are one person there: the login lock
 * must count them as one too, or each spelling gets its own guesses.
 *
 * Trimmed, inner runs of white space collapsed to one space, Unicode NFKC-normalised and
 * case-folded (lower case after NFKC, which is what caseIgnoreMatch's prepared string compares).
 */
export function canonicalUsername(typed: string): string {
  return typed.normalize('NFKC').trim().replace(/\s+/gu, ' ').toLowerCase();
}
