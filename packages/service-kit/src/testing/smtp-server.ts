import { createServer, type Server, type Socket } from 'node:net';
import type { ParsedMail } from 'mailparser';

/**
 * A real SMTP server over TCP on a free loopback port (the npm `smtp-server` package, by the
 * nodemailer authors) as the receiving side of the mail tests: plain, or offering STARTTLS with a
 * certificate from a throw-away CA (throw-away-certificate.ts). Also a port nobody
 * listens on (server down) and a server that accepts connections and never answers (stall).
 */

export interface ReceivedMail {
  to: string[];
  parsed: ParsedMail;
  /** The transport was upgraded with STARTTLS (or was implicit TLS). */
  secure: boolean;
}

export interface SmtpFixture {
  port: number;
  url: string;
  received: ReceivedMail[];
  /** The next mail to `to` (with this subject, when given) not yet returned by this function (waits for it). */
  nextMailTo(to: string, options?: { subject?: string; timeoutMs?: number }): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startSmtpServer(
  options: { tls?: { key: Buffer; cert: Buffer } } = {},
): Promise<SmtpFixture> {
  const received: ReceivedMail[] = [];
  const waiters: Array<() => void> = [];
  // Loaded on first use: the testing entry stays quick to import for the suites that never start it.
  const [{ SMTPServer }, { simpleParser }] = await Promise.all([import('smtp-server'), import('mailparser')]);
  const server = new SMTPServer({
    authOptional: true,
    disableReverseLookup: true,
    logger: false,
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : { disabledCommands: ['STARTTLS'] }),
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          received.push({
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            parsed,
            secure: session.secure,
          });
          for (const wake of waiters.splice(0)) wake();
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  const port = await listen(server.server as unknown as Server);
  const taken = new Set<ReceivedMail>();

  async function nextMailTo(to: string, options: { subject?: string; timeoutMs?: number } = {}) {
    const timeoutMs = options.timeoutMs ?? 10_000;
    const deadline = Date.now() + timeoutMs;
    const wanted = (candidate: ReceivedMail) =>
      !taken.has(candidate) &&
      candidate.to.includes(to) &&
      (options.subject === undefined || candidate.parsed.subject === options.subject);
    for (;;) {
      const mail = received.find(wanted);
      if (mail) {
        taken.add(mail);
        return mail;
      }
      if (Date.now() > deadline) throw new Error(`no mail to ${to} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  return {
    port,
    url: `smtp://localhost:${port}`,
    received,
    nextMailTo,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}

/** A loopback port with nothing listening: connecting is refused at once. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Accepts TCP connections and never says a word (no SMTP greeting): a stalled mail server. */
export async function startStallingServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const port = await listen(server);
  return {
    port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The URLs in a mail's text part. */
export function urlsIn(text: string | undefined): string[] {
  return [...(text ?? '').matchAll(/https?:\/\/\S+/g)].map((match) => match[0]);
}
