#!/usr/bin/env node
// The `orders` command. Runs the TypeScript sources through tsx's loader (no build step), the way
// the services run; `pnpm --filter @oidc-orders/cli start -- <command>` does the same.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
