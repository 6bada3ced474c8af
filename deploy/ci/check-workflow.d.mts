/** Types of check-workflow.mjs (plain JavaScript, run by deploy/ci/container-test.sh). */
export const COMPOSE_STEPS: { job: RegExp; containerTest: RegExp; what: string }[];
export function workflowProblems(workflowText: string, containerTestText: string): string[];
