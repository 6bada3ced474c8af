import fp from 'fastify-plugin';
import { openDirectory } from '../directory/open-directory.js';
import type { Directory } from '../directory/types.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Directory users (README "Directory users"); `null` when LDAP_URL is not set. */
    directory: Directory | null;
  }
}

/** Opens the directory when configured; nothing LDAP is loaded otherwise (directory/open-directory.ts). */
export const directoryPlugin = fp(
  async (app) => {
    const log = app.log.child({ component: 'directory' });
    const directory = await openDirectory(app.config.directory, {
      warn: (fields, message) => log.warn(fields, message),
    });
    app.decorate('directory', directory);
    app.addHook('onClose', async () => {
      await directory?.close();
    });
  },
  { name: 'directory', dependencies: ['config'] },
);
