import { defineConfig } from 'drizzle-kit';

// Only `drizzle-kit generate` reads this file; it needs no database connection.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema.ts',
  out: './drizzle',
});
