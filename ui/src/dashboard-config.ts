/**
 * What the service tells the page at start (`/ui/config.json`, from UI_OIDC_*): whether to offer
 * sign-in with the company's identity provider. Its shape is the service's own type.
 */
import type { DashboardConfig } from '../../src/http/dashboard-config.ts';

export type UiOidcSettings = NonNullable<DashboardConfig['oidc']>;

let config: DashboardConfig = { oidc: null };

/** Reads the configuration once; without it (an older service, a network error) only pasting is offered. */
export async function loadDashboardConfig(): Promise<void> {
  try {
    const response = await fetch('/ui/config.json', { cache: 'no-store', credentials: 'omit' });
    if (response.ok) config = (await response.json()) as DashboardConfig;
  } catch {
    // Pasting a token still works.
  }
}

/** The identity provider's settings, or null when the service offers none. */
export const oidcSettings = (): UiOidcSettings | null => config.oidc;
