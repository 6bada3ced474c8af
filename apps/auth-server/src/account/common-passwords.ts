/**
 * A short list of the most common passwords (from public breach corpora rankings), refused when a
 * password is changed (NIST SP 800-63B §5.1.1.2: "passwords obtained from previous breach
 * corpuses", "commonly-used … passwords"). Compared case-insensitively.
 */
const COMMON_PASSWORDS = new Set([
  '123456',
  '123456789',
  '12345678',
  'password',
  'qwerty123',
  'qwerty1',
  '111111',
  '12345',
  'secret',
  '123123',
  '1234567890',
  '1234567',
  'qwerty',
  'abc123',
  'password1',
  'iloveyou',
  '000000',
  'qwertyuiop',
  '1q2w3e4r',
  'dragon',
  'monkey',
  'letmein',
  'football',
  'baseball',
  'welcome',
  'welcome1',
  'admin',
  'admin123',
  'princess',
  'sunshine',
  'master',
  'shadow',
  'superman',
  'trustno1',
  'passw0rd',
  'p@ssw0rd',
  'password123',
  'password12',
  'changeme',
  'login',
  'starwars',
  'whatever',
  'zaq12wsx',
  '1qaz2wsx',
  'asdfghjkl',
  'qazwsx',
  'michael',
  'jennifer',
  'hunter2',
  'correcthorsebatterystaple',
  'liverpool',
  'chelsea',
  'computer',
  'internet',
  'summer2024',
  'winter2024',
  'spring2024',
  'autumn2024',
  'summer2025',
  'winter2025',
]);

export const MINIMUM_PASSWORD_LENGTH = 10;

/** Why a new password is refused, or `null` when it is acceptable. */
export function passwordProblem(password: string, username: string): string | null {
  if ([...password].length < MINIMUM_PASSWORD_LENGTH) {
    return `Choose a password of at least ${MINIMUM_PASSWORD_LENGTH} characters.`;
  }
  const lower = password.toLowerCase();
  if (COMMON_PASSWORDS.has(lower) || lower === username.toLowerCase()) {
    return 'That password is too common. Choose another one.';
  }
  return null;
}
