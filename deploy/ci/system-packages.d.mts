/** Types of system-packages.mjs (plain JavaScript: it runs before `pnpm install`). */
export interface SystemRequirement {
  name: string;
  /** What it is, for a line saying what is missing. */
  what: string;
  debian: string[];
  /** Absolute paths (one `*` segment allowed) or commands on PATH that prove it installed. */
  paths: string[];
  /** `VAR` (its value replaces the first path) or `VAR/file` (a file in the folder it names). */
  env?: string;
  noRecommends?: boolean;
  debconf?: string[];
  /** Files, relative to the repository root, that need it: suites, or .ci/run. */
  neededBy: string[];
}
export const repositoryRoot: string;
export function systemRequirements(): SystemRequirement[];
export function requiredPaths(requirement: SystemRequirement, environment?: NodeJS.ProcessEnv): string[];
export function missingPaths(requirement: SystemRequirement, environment?: NodeJS.ProcessEnv): string[];
export function neededHere(requirement: SystemRequirement): boolean;
