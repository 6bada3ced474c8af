import type { FastifyPluginAsync } from 'fastify';
import { AdminActionRefusedError } from '../../admin/admin-errors.js';
import { ENDPOINTS } from '../../endpoints.js';
import { adminResponses, SeedPlanView } from '../../schemas/admin-api.js';
import type { SeedDocument } from '../../schemas/seed.js';
import { planHasChanges } from '../../seed-plan/plan.js';
import { planSeed, planSeedFile, seedPlanContext } from '../../seed-plan/plan-seed.js';

export interface SeedPlanRouteOptions {
  /** The seed given in code when there is no SEED_FILE (tests, an embedding program). */
  seed?: SeedDocument | undefined;
}

/**
 * What applying the current seed file would change: the file is read again on each request, so
 * an edit (a merged pull request) shows its effect before the restart that applies it.
 */
export const seedPlanRoutes: FastifyPluginAsync<SeedPlanRouteOptions> = async (app, options) => {
  const context = seedPlanContext(app.config);
  const seedFile = app.config.seedFile;

  async function currentPlan() {
    const db = app.database.db;
    if (seedFile !== undefined) return planSeedFile(db, seedFile, context);
    if (options.seed !== undefined) return planSeed(db, options.seed, context);
    throw new AdminActionRefusedError('no_seed', 'the server runs without a seed file (SEED_FILE)');
  }
  app.get(
    ENDPOINTS.adminSeedPlan.path,
    { schema: { response: adminResponses(200, SeedPlanView) } },
    async () => {
      const plan = await currentPlan();
      return { hasChanges: planHasChanges(plan), ...plan };
    },
  );
};
