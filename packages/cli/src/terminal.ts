/** The streams a command writes to; `isTTY` decides spinners, colours and QR codes. */
export interface Terminal {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

export function print(terminal: Terminal, text = ''): void {
  terminal.stdout.write(`${text}\n`);
}

export function printError(terminal: Terminal, text: string): void {
  terminal.stderr.write(`${text}\n`);
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface Spinner {
  update(text: string): void;
  stop(): void;
}

/**
 * A one-line spinner on stderr, only when stderr is a terminal: piped or captured output (scripts,
 * tests, CI logs) gets no control characters, just the lines the command prints.
 */
export function startSpinner(terminal: Terminal, text: string): Spinner {
  if (!terminal.stderr.isTTY) return { update() {}, stop() {} };
  let frame = 0;
  let current = text;
  const draw = () => {
    terminal.stderr.write(`\r\x1b[2K${FRAMES[frame % FRAMES.length]} ${current}`);
    frame += 1;
  };
  draw();
  const timer = setInterval(draw, 80);
  return {
    update(next) {
      current = next;
    },
    stop() {
      clearInterval(timer);
      terminal.stderr.write('\r\x1b[2K');
    },
  };
}

/** `9:05` from seconds. */
export function formatDuration(seconds: number): string {
  const safe = Math.max(0, Math.floor(seconds));
  return `${Math.floor(safe / 60)}:${String(safe % 60).padStart(2, '0')}`;
}

/** Left-aligned columns for small tables. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
