/**
 * Passwords refused when a password is set (account page, `users add`, `users reset-password`):
 * NIST SP 800-63B §5.1.1.2 asks verifiers to compare new passwords against "passwords obtained from
 * previous breach corpuses" and "commonly-used … passwords". Compared case-insensitively.
 *
 * The list: the "passwords-common" dictionary of `@zxcvbn-ts/language-common` (MIT licence, the
 * zxcvbn-ts project), 49,233 passwords ranked by frequency in Mark Burnett's corpus of ten million
 * passwords from public breaches (released into the public domain in 2015; the same corpus the
 * SecLists "10k most common" list is cut from), lower-cased, those seen more than ten times. It is a
 * production dependency, so every way the server is shipped (`pnpm start`, whose bundle keeps
 * third-party packages as imports; the Docker image's `pnpm deploy --prod`) carries it. It is loaded
 * on first use, not at start (about 3 MB of heap), and kept.
 *
 * Besides it, a few entries of our own that the corpus predates or ranks too low (seasons with
 * years, "correcthorsebatterystaple", …).
 */
const OUR_ADDITIONS = [
  'login',
  'correcthorsebatterystaple',
  'spring2024',
  'summer2024',
  'autumn2024',
  'winter2024',
  'summer2025',
  'winter2025',
];

export const MINIMUM_PASSWORD_LENGTH = 10;

let loaded: Promise<ReadonlySet<string>> | undefined;

/** The common passwords, lower-cased; loaded once, on first use. */
export function commonPasswords(): Promise<ReadonlySet<string>> {
  loaded ??= import('@zxcvbn-ts/language-common').then(
    ({ dictionary }) =>
      new Set([...dictionary['passwords-common'], ...OUR_ADDITIONS].map((entry) => entry.toLowerCase())),
    (error: unknown) => {
      // A failed load is not remembered: the next password change tries again.
      loaded = undefined;
      throw error;
    },
  );
  return loaded;
}

/** Why a new password is refused, or `null` when it is acceptable. */
export async function passwordProblem(password: string, username: string): Promise<string | null> {
  if ([...password].length < MINIMUM_PASSWORD_LENGTH) {
    return `Choose a password of at least ${MINIMUM_PASSWORD_LENGTH} characters.`;
  }
  const lower = password.toLowerCase();
  if (lower === username.toLowerCase() || (await commonPasswords()).has(lower)) {
    return 'That password is too common. Choose another one.';
  }
  return null;
}
