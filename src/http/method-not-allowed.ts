import type { FastifyInstance } from 'fastify';

/** The order `Allow` lists methods in: the usual reading order rather than registration order. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

const byUsualOrder = (a: string, b: string) => {
  const rank = (method: string) => {
    const at = METHOD_ORDER.indexOf(method);
    return at === -1 ? METHOD_ORDER.length : at;
  };
  return rank(a) - rank(b) || a.localeCompare(b);
};

/**
 * Follows `app`'s route table (an `onRoute` hook, so it must be installed before any route) and
 * returns what a path allows: the methods for which Fastify's own router finds a route for that
 * path, `HEAD` included wherever `GET` is (Fastify serves it). An empty list means the path names
 * nothing this app serves (a 404); otherwise a request with another method is a 405 (docs/reference.md §11.8).
 * Reading the router itself, rather than a copy of the patterns, keeps its precedence exact
 * (`/products/ingestions` is not `/products/:external_id`) for every route added later.
 */
export function trackAllowedMethods(app: FastifyInstance): (path: string) => string[] {
  const methods = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) methods.add(method);
  });
  return (path) => {
    const allowed = new Set([...methods].filter((method) => app.findRoute({ method, url: path }) !== null));
    if (allowed.has('GET')) allowed.add('HEAD');
    return [...allowed].sort(byUsualOrder);
  };
}
