/**
 * "Did you mean": the closest known word within a small edit distance (Levenshtein with
 * transpositions, row by row), or undefined when nothing is close enough to be a likely typo.
 */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (best === undefined || distance < best.distance) best = { candidate, distance };
  }
  const tolerance = Math.max(1, Math.floor(word.length / 3));
  return best !== undefined && best.distance <= tolerance ? best.candidate : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  let beforePrevious = previous;
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
      // Two swapped neighbours ("lsit") count as one edit (optimal string alignment).
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        current[j] = Math.min(current[j]!, beforePrevious[j - 2]! + 1);
      }
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length]!;
}
