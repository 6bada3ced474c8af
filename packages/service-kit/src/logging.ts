/**
 * pino-pretty in a worker thread, for a person at a terminal (each server decides: a TTY, development,
 * not CI): one readable line per event, the service named on each, so the lines of `pnpm dev` (both
 * services and the SPA in one terminal) say whose they are. Each app keeps its own redaction.
 */
export function prettyTransport(service: string) {
  return {
    target: 'pino-pretty',
    options: { ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss', messageFormat: `${service} | {msg}` },
  };
}
