/**
 * A small SVG line-chart writer for the soak plot: no plotting library, no external service, one
 * self-contained file the README shows. Unit-tested in test/soak.test.ts.
 */

export interface Series {
  name: string;
  color: string;
  points: readonly { x: number; y: number }[];
}

export interface Panel {
  title: string;
  yLabel: string;
  series: readonly Series[];
}

const WIDTH = 900;
const PANEL_HEIGHT = 260;
const MARGIN = { left: 70, right: 170, top: 34, bottom: 40 };

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A round upper bound for an axis: 1, 2 or 5 × 10^n at or above the largest value. */
export function niceCeiling(value: number): number {
  if (!(value > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 5, 10].find((candidate) => candidate * magnitude >= value) ?? 10;
  return step * magnitude;
}

function panelSvg(panel: Panel, top: number, maxX: number, xLabel: string): string {
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = PANEL_HEIGHT - MARGIN.top - MARGIN.bottom;
  const maxY = niceCeiling(Math.max(0, ...panel.series.flatMap((s) => s.points.map((p) => p.y))));
  const x = (value: number) => MARGIN.left + (maxX === 0 ? 0 : (value / maxX) * plotWidth);
  const y = (value: number) => top + MARGIN.top + plotHeight - (value / maxY) * plotHeight;
  const parts: string[] = [
    `<text x="${MARGIN.left}" y="${top + 20}" font-size="15" font-weight="bold">${escapeXml(panel.title)}</text>`,
    `<rect x="${MARGIN.left}" y="${top + MARGIN.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#999"/>`,
  ];
  for (let tick = 0; tick <= 4; tick++) {
    const value = (maxY * tick) / 4;
    parts.push(
      `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotWidth}" y1="${y(value)}" y2="${y(value)}" stroke="#eee"/>`,
      `<text x="${MARGIN.left - 6}" y="${y(value) + 4}" font-size="11" text-anchor="end">${formatTick(value)}</text>`,
    );
    const xValue = (maxX * tick) / 4;
    parts.push(
      `<text x="${x(xValue)}" y="${top + PANEL_HEIGHT - 22}" font-size="11" text-anchor="middle">${formatTick(xValue)}</text>`,
    );
  }
  parts.push(
    `<text x="${MARGIN.left + plotWidth / 2}" y="${top + PANEL_HEIGHT - 6}" font-size="12" text-anchor="middle">${escapeXml(xLabel)}</text>`,
    `<text x="16" y="${top + MARGIN.top + plotHeight / 2}" font-size="12" text-anchor="middle" transform="rotate(-90 16 ${top + MARGIN.top + plotHeight / 2})">${escapeXml(panel.yLabel)}</text>`,
  );
  panel.series.forEach((series, index) => {
    const coordinates = series.points.map((p) => `${x(p.x).toFixed(1)},${y(p.y).toFixed(1)}`).join(' ');
    const legendY = top + MARGIN.top + 14 + index * 18;
    parts.push(
      `<polyline fill="none" stroke="${series.color}" stroke-width="1.5" points="${coordinates}"><title>${escapeXml(series.name)}</title></polyline>`,
      `<line x1="${WIDTH - MARGIN.right + 12}" x2="${WIDTH - MARGIN.right + 32}" y1="${legendY - 4}" y2="${legendY - 4}" stroke="${series.color}" stroke-width="3"/>`,
      `<text x="${WIDTH - MARGIN.right + 38}" y="${legendY}" font-size="12">${escapeXml(series.name)}</text>`,
    );
  });
  return parts.join('\n');
}

function formatTick(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

/** Panels stacked vertically, sharing the x axis (0 … the largest x of any series). */
export function lineChartsSvg(panels: readonly Panel[], xLabel: string, caption: string): string {
  const maxX = Math.max(
    0,
    ...panels.flatMap((panel) => panel.series.flatMap((s) => s.points.map((p) => p.x))),
  );
  const height = panels.length * PANEL_HEIGHT + 30;
  const body = panels.map((panel, index) => panelSvg(panel, index * PANEL_HEIGHT, maxX, xLabel)).join('\n');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">`,
    // The accessible name of the image: what it plots, then the caption.
    `<title>${escapeXml(`${panels.map((panel) => panel.title).join('; ')}. ${caption}`)}</title>`,
    `<rect width="100%" height="100%" fill="white"/>`,
    body,
    `<text x="${MARGIN.left}" y="${height - 10}" font-size="11" fill="#555">${escapeXml(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
