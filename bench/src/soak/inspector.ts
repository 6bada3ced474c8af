import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket } from 'undici';
import type { ServerProcess } from '../processes.js';

/**
 * The heap a server retains after a full garbage collection, read through the V8 inspector (the
 * Chrome DevTools protocol) so that no product code changes for it. "Heap used" sampled at random
 * moments follows the collector's sawtooth (garbage not yet collected); what a leak moves is the
 * level the heap falls back to after a full collection, which is what this measures.
 *
 * Our servers start with the inspector listening on a loopback port the kernel picks (port 0:
 * several servers start with the same flags); node prints the WebSocket address on stderr, which
 * the harness keeps in the server's log. With no client attached, or a client that enables no
 * domain (no Debugger, no Profiler), the inspector costs the server nothing per request.
 */
export function inspectorFlags(): string[] {
  return ['--inspect=127.0.0.1:0'];
}

const LISTENING = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[0-9a-f-]+)/;

/** The inspector's WebSocket address from the server's log (node prints it before the app starts). */
export async function inspectorUrl(server: ServerProcess): Promise<string> {
  for (let attempt = 0; attempt < 40; attempt += 1) {
    const match = LISTENING.exec(await readFile(server.logFile, 'utf8').catch(() => ''));
    if (match?.[1]) return match[1];
    await sleep(250);
  }
  throw new Error(`${server.name}: no "Debugger listening on ws://…" line in ${server.logFile}`);
}

interface ProtocolAnswer {
  id?: number;
  result?: unknown;
  error?: { message: string };
}

/** One DevTools protocol session: commands by id, answers matched by id. */
export class InspectorSession {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => this.answer(String(event.data)));
    socket.addEventListener('close', () => this.failAll(new Error('inspector connection closed')));
  }

  static async connect(url: string): Promise<InspectorSession> {
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error(`cannot connect to ${url}`)), { once: true });
    });
    return new InspectorSession(socket);
  }

  send<T>(method: string, params: Record<string, unknown> = {}, timeoutMs = 60_000): Promise<T> {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ id, method, params }));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer in ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as T);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
    });
  }

  close(): void {
    this.socket.close();
  }

  private answer(text: string): void {
    const message = JSON.parse(text) as ProtocolAnswer;
    if (message.id === undefined) return; // an event: no domain is enabled, so none is expected
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    if (message.error) waiting.reject(new Error(message.error.message));
    else waiting.resolve(message.result);
  }

  private failAll(error: Error): void {
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }
}

/**
 * Forces a full collection (`HeapProfiler.collectGarbage`: V8's low-memory notification, full
 * mark-compacts until nothing more is freed) and returns the V8 heap still in use, MB.
 */
export async function heapAfterFullGcMb(session: InspectorSession): Promise<number> {
  await session.send('HeapProfiler.collectGarbage');
  const usage = await session.send<{ usedSize: number }>('Runtime.getHeapUsage');
  return Math.round((usage.usedSize / 2 ** 20) * 10) / 10;
}
