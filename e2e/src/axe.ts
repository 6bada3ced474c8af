/**
 * axe-core (Deque's accessibility engine) run inside the page, as a person's browser renders it.
 * The script is evaluated over the DevTools protocol, which the pages' CSP (`script-src 'self'`)
 * does not govern, so the pages need no exception for the test.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** Every axe rule of WCAG 2.x A and AA (and best practices) on the page as it is now; none may fail. */
export async function expectNoAxeViolations(page: Page, state: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations: Violation[] = await page.evaluate(async () => {
    const { axe } = window as unknown as { axe: typeof import('axe-core') };
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact ?? null,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(' ')),
    }));
  });
  expect(violations, `axe-core violations on ${state}`).toEqual([]);
}
