/**
 * What every page a person sees must satisfy, checked in the browser itself: a language, a title
 * and one heading; every control labelled and every button or link named; no inline script; no
 * sideways scrolling on a 320-pixel-wide phone; and no axe-core violation (WCAG 2.x A and AA), so
 * every browser suite that checks a page runs axe on it.
 */
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { expectNoAxeViolations } from './axe.js';

export interface PageCheckOptions {
  /** The number of stylesheets the page must load (the sign-in pages have exactly one). */
  stylesheets?: number;
}

export async function expectAccessiblePage(page: Page, options: PageCheckOptions = {}): Promise<void> {
  const facts = await page.evaluate(() => {
    const visible = (element: Element) => {
      const box = element.getBoundingClientRect();
      return box.width > 0 && box.height > 0;
    };
    const controls = [...document.querySelectorAll('input, select, textarea')].filter(
      (element) => (element as HTMLInputElement).type !== 'hidden' && visible(element),
    );
    const unlabelled = controls
      .filter(
        (element) =>
          ((element as HTMLInputElement).labels?.length ?? 0) === 0 &&
          !element.getAttribute('aria-label') &&
          !element.getAttribute('aria-labelledby'),
      )
      .map((element) => element.outerHTML);
    const unnamed = [...document.querySelectorAll('button, a[href]')]
      .filter((element) => visible(element))
      .filter((element) => (element.textContent ?? '').trim() === '' && !element.getAttribute('aria-label'))
      .map((element) => element.outerHTML);
    return {
      lang: document.documentElement.lang,
      title: document.title,
      headings: document.querySelectorAll('h1').length,
      unlabelled,
      unnamed,
      inlineScripts: [...document.scripts].filter((script) => !script.src).length,
      inlineStyles: document.querySelectorAll('style, [style]').length,
      stylesheets: document.styleSheets.length,
      viewportMeta: document.querySelector('meta[name="viewport"]')?.getAttribute('content') ?? null,
    };
  });
  expect(facts.lang, 'html lang').toBe('en');
  expect(facts.title.trim(), 'title').not.toBe('');
  expect(facts.headings, 'one h1').toBe(1);
  expect(facts.unlabelled, 'controls without a label').toEqual([]);
  expect(facts.unnamed, 'buttons and links without a name').toEqual([]);
  expect(facts.inlineScripts, 'inline scripts').toBe(0);
  expect(facts.inlineStyles, 'inline styles').toBe(0);
  expect(facts.viewportMeta, 'responsive viewport').toContain('width=device-width');
  if (options.stylesheets !== undefined) expect(facts.stylesheets, 'stylesheets').toBe(options.stylesheets);
  await expectNoSidewaysScrolling(page);
  await expectNoAxeViolations(page, page.url());
}

/** Narrows the window to a small phone's width and back: the content must reflow, not overflow. */
export async function expectNoSidewaysScrolling(page: Page): Promise<void> {
  const original = page.viewportSize();
  await page.setViewportSize({ width: 320, height: 640 });
  try {
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow, 'horizontal overflow at 320px').toBeLessThanOrEqual(0);
  } finally {
    if (original) await page.setViewportSize(original);
  }
}

/** A JWS/JWT in compact form (ID, access and logout tokens all start with a base64url `{"`). */
export const JWT_PATTERN = /eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]+/;
