import { query } from './api.ts';

/**
 * Writes a view's state into the hash's query (`#/catalog?q=lamp&type=Lighting`), so a reload or a
 * shared link opens the view as it was. `history.replaceState` changes the address without a new
 * history entry and without a `hashchange`: typing does not flood Back, and the view is not redrawn.
 */
export function replaceHashQuery(params: Record<string, string | null | undefined>): void {
  const [path] = location.hash.replace(/^#/, '').split('?');
  // No hash at all is the home view, `#/`.
  const hash = `#${path || '/'}${query(params)}`;
  if (hash !== location.hash) history.replaceState(history.state, '', hash);
}
