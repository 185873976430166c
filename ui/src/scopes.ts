/**
 * What the session's token allows, read from its `scope` claim, so that every view offers only the
 * actions the service would accept and says why the others are missing (docs/ui.md, Scopes). The
 * service still checks each call: this only spares a person a form that ends in a 403.
 */
import { SCOPES, type Scope } from '../../src/auth/scopes.ts';
import { h } from './dom.ts';
import { currentSession } from './session.ts';

export { SCOPES, type Scope };

/** Whether the current session's token carries `scope`. */
export function hasScope(scope: Scope): boolean {
  return currentSession()?.scopes.includes(scope) ?? false;
}

/**
 * The line shown in place of what `scope` would allow, e.g. "Your token lacks the webhooks:manage
 * scope to add endpoints.", or null when the token has it (the action is shown instead).
 */
export function missingScopeNote(scope: Scope, toDo: string): HTMLElement | null {
  if (hasScope(scope)) return null;
  return h(
    'p',
    { class: 'scope-note', 'data-scope': scope },
    'Your token lacks the ',
    h('code', {}, scope),
    ` scope ${toDo}. Sign in with a token that has it to do so.`,
  );
}
