import type { Logger } from '../observability/logger.ts';
import type { KeySetEvents } from './remote-keys.ts';

/** What an operator reads when the key set of AUTH_JWKS_URL fails, outlasts its grace, and recovers. */
export function logKeySetEvents(log: Logger): KeySetEvents {
  return {
    onOutage: (error, standIn) =>
      standIn
        ? log.warn(
            { err: error },
            'cannot fetch the key set of AUTH_JWKS_URL: the last one fetched verifies for up to an hour',
          )
        : log.error(
            { err: error },
            'cannot fetch the key set of AUTH_JWKS_URL, and none was fetched before: tokens it must verify get 503',
          ),
    onStaleExpired: () =>
      log.error(
        {},
        'the key set of AUTH_JWKS_URL has failed for over an hour: tokens it must verify now get 503',
      ),
    onRecovery: () => log.info({}, 'the key set of AUTH_JWKS_URL can be fetched again'),
  };
}
