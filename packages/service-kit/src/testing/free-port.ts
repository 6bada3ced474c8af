import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Linux's default `net.ipv4.ip_local_port_range` lower bound, when /proc cannot be read. */
const DEFAULT_EPHEMERAL_LOW = 32768;
const LOWEST_TEST_PORT = 20000;

/**
 * The first port the kernel hands out on its own (to `listen(0)` and to outgoing connections).
 * A port a test picks now but a child process binds seconds later must lie below it: a port from
 * the ephemeral range can be taken meanwhile by any outgoing connection of any process (seen: a
 * dev launcher's orders port taken while the auth server started).
 */
function ephemeralRangeLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const value = Number(low);
    return Number.isInteger(value) && value > LOWEST_TEST_PORT + 1000 ? value : DEFAULT_EPHEMERAL_LOW;
  } catch {
    return DEFAULT_EPHEMERAL_LOW;
  }
}

function canListen(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A loopback port nothing listens on right now, chosen at random below the kernel's ephemeral
 * range (see ephemeralRangeLow), checked by binding it once on 127.0.0.1 and releasing it.
 */
export async function findFreePort(): Promise<number> {
  const high = ephemeralRangeLow() - 1;
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = LOWEST_TEST_PORT + Math.floor(Math.random() * (high - LOWEST_TEST_PORT));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free loopback port between ${LOWEST_TEST_PORT} and ${high} after 50 tries`);
}
