/**
 * The scopes the API knows (docs/api-conventions.md, the scopes table), in a module of their own so
 * that the dashboard reads the same names as the routes that check them (ui/src/scopes.ts).
 */
export const SCOPES = {
  ingestionsWrite: 'ingestions:write',
  ingestionsRead: 'ingestions:read',
  catalogRead: 'catalog:read',
  analysisRun: 'analysis:run',
  catalogWrite: 'catalog:write',
  webhooksManage: 'webhooks:manage',
} as const;

/** One scope's name. */
export type Scope = (typeof SCOPES)[keyof typeof SCOPES];

/** Every scope, as a token's `scope` claim writes them: what `npm run token` grants by default. */
export const ALL_SCOPES = Object.values(SCOPES).join(' ');
