import type { SmtpTimings } from '../../src/mail/mailer.js';

/** Timings short enough that a stalled server is given up on within a test's patience. */
export const STALL_TEST_SMTP_TIMINGS: SmtpTimings = {
  connectionTimeoutMs: 300,
  greetingTimeoutMs: 300,
  socketTimeoutMs: 500,
  sendDeadlineMs: 1_000,
  attempts: 2,
  retryBackoffMs: 50,
};
