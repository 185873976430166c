import type { Queryable } from '../../src/db/database.ts';

/** Reading PostgreSQL's plans in tests: which index a statement takes (the plan tests' one source). */

/** A statement's plan as `EXPLAIN (FORMAT JSON)` gives it (a string on PGlite, parsed on a server). */
export async function explainJson(
  db: Queryable,
  text: string,
  params?: readonly unknown[],
): Promise<unknown> {
  const [row] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${text}`, params);
  const plan = row?.['QUERY PLAN'];
  return typeof plan === 'string' ? JSON.parse(plan) : plan;
}

/**
 * How a plan scans `relation`: the index's name for an index scan, else the scan's type (`Seq
 * Scan`), so that a plan that left the index shows as what it did rather than as nothing.
 */
export function scansOf(plan: unknown, relation: string): string[] {
  if (Array.isArray(plan)) return plan.flatMap((node) => scansOf(node, relation));
  if (plan === null || typeof plan !== 'object') return [];
  const node = plan as Record<string, unknown>;
  const scan = node['Relation Name'] === relation && String(node['Node Type']).endsWith('Scan');
  const own = scan ? [String(node['Index Name'] ?? node['Node Type'])] : [];
  return [...own, ...Object.values(node).flatMap((child) => scansOf(child, relation))];
}

/**
 * How the statements `run` sends scan `relation`, planned and not run: each is explained instead
 * (and answers no rows), so a repository function can be passed whole, with its own SQL.
 */
export async function plannedScans(
  db: Queryable,
  relation: string,
  run: (explaining: Queryable) => Promise<unknown>,
): Promise<string[]> {
  const scans: string[] = [];
  const explaining: Queryable = {
    async query<R>(text: string, params?: readonly unknown[]) {
      scans.push(...scansOf(await explainJson(db, text, params), relation));
      return [] as R[];
    },
    exec: () => Promise.reject(new Error(`plannedScans explains single statements, not exec's strings`)),
  };
  await run(explaining);
  return [...new Set(scans)];
}
