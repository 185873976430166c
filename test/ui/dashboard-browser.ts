/**
 * The dashboard's browser tests' pieces: Debian's Chromium driven by playwright-core, a real service
 * listening on a loopback port with the dashboard built by `npm run build`, screenshots of every
 * test, and axe-core's accessibility check run in the page.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import sharp from 'sharp';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { lateBound, startedForFile } from '../helpers/file-fixture.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CHROMIUM = '/usr/bin/chromium';
/** Where every test leaves its screenshot (ignored by git). */
const SCREENSHOTS = path.join(ROOT, 'test', 'ui', 'screenshots');
/** Where `UI_DOCS_SCREENSHOTS=1` puts the views' pictures that docs/ui.md shows. */
const DOCS_SCREENSHOTS = path.join(ROOT, 'docs', 'ui');

/** Why these tests cannot run here, or false when they can. */
export const skipBrowser = existsSync(CHROMIUM)
  ? false
  : `Chromium is not installed at ${CHROMIUM} (apt-get install -y chromium; .ci/run does it)`;

/** The flags Chromium runs with: headless, no sandbox (root in a container), nothing fetched from outside. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

/** A desktop and a phone screen. */
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** One test file's world: the service on a loopback port and one browser. */
export interface DashboardWorld {
  api: TestService;
  baseUrl: string;
  browser: Browser;
  /** A fresh browser context (its own sessionStorage) signed in as `token`, on `hash`. */
  open(token: string | null, hash?: string, viewport?: typeof DESKTOP): Promise<Page>;
  stop(): Promise<void>;
}

/** Builds the dashboard as `npm start` does (skipped when its sources have not changed). */
async function buildDashboard(): Promise<void> {
  await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: ROOT });
}

/** Starts the service (with `env`), makes it listen on 127.0.0.1, and launches Chromium. */
export async function startDashboardWorld(
  env: Record<string, string> = {},
  options: { analyzer?: boolean } = {},
): Promise<DashboardWorld> {
  await buildDashboard();
  const api = await startTestService(env, undefined, { analyzer: options.analyzer ?? false });
  let browser: Browser | undefined;
  try {
    await api.service.app!.listen({ port: 0, host: '127.0.0.1' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // playwright-core gives each launch a fresh profile directory of its own (and removes it).
      args: CHROMIUM_ARGS,
    });
  } catch (error) {
    await api.stop();
    throw error;
  }
  const baseUrl = `http://127.0.0.1:${(api.service.app!.server.address() as { port: number }).port}`;
  const contexts: BrowserContext[] = [];
  return {
    api,
    baseUrl,
    browser,
    async open(token, hash = '#/batches', viewport = DESKTOP) {
      const context = await browser.newContext({ viewport, acceptDownloads: true });
      contexts.push(context);
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      watchPolicyViolations(page);
      await page.goto(`${baseUrl}/ui/#/sign-in`);
      if (token !== null) {
        await page.getByLabel('Bearer token').fill(token);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByTestId('tenant').waitFor({ state: 'attached' });
      }
      if (hash !== '#/batches' || token === null) await page.goto(`${baseUrl}/ui/${hash}`);
      return page;
    },
    async stop() {
      await Promise.all(contexts.map((context) => context.close().catch(() => undefined)));
      await browser.close().catch(() => undefined);
      await api.stop();
    },
  };
}

/** The world of a browser test file (see `startDashboardWorld`), started before its first test and stopped after its last. */
export function dashboardWorldForFile(
  env: Record<string, string> = {},
  options: { analyzer?: boolean } = {},
): DashboardWorld {
  const started = startedForFile(
    () => startDashboardWorld(env, options),
    (world) => world.stop(),
    { skip: skipBrowser !== false },
  );
  return lateBound(started, 'the dashboard world');
}

/** A test that needs the browser: skipped, and saying why, where Chromium is missing. */
export function browserTest(name: string, body: (t: TestContext) => Promise<void>): void {
  void test(name, { skip: skipBrowser }, body);
}

/** Violations of the page's CSP, by page: a test fails when the dashboard trips its own policy. */
const violations = new WeakMap<Page, string[]>();

export function watchPolicyViolations(page: Page): void {
  const seen: string[] = [];
  violations.set(page, seen);
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text()))
      seen.push(message.text());
  });
  page.on('pageerror', (error) => seen.push(`page error: ${error.message}`));
}

/** Asserts the page has run no script error and broken no rule of its CSP. */
export function assertCleanPage(page: Page): void {
  assert.deepEqual(violations.get(page) ?? [], []);
}

const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, so the page's CSP, which admits
 * no foreign script, stays on) and asserts no violation of any impact, minor ones included.
 */
export async function assertAccessible(page: Page, view: string): Promise<void> {
  await page.evaluate(await axeSource);
  const found = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run(): Promise<{ violations: Array<Record<string, unknown>> }> } }
    ).axe;
    const result = await axe.run();
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      nodes: (violation.nodes as Array<{ target: unknown }>).map((node) => JSON.stringify(node.target)),
    }));
  });
  assert.deepEqual(found, [], `accessibility violations on the ${view} view`);
}

/** The little of the page's DOM that the layout checks below read (these files compile without the DOM library). */
interface PageElement {
  tagName: string;
  className: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  parentElement: PageElement | null;
  scrollWidth: number;
  clientWidth: number;
  getBoundingClientRect(): {
    left: number;
    right: number;
    top: number;
    bottom: number;
    width: number;
    height: number;
  };
  checkVisibility(options: { visibilityProperty: boolean }): boolean;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): Iterable<PageElement>;
}
interface PageWindow {
  document: { body: PageElement; documentElement: PageElement };
  innerWidth: number;
  getComputedStyle(
    element: PageElement,
    pseudo?: string,
  ): { clip: string; overflowX: string; display: string; content: string };
}

/**
 * Asserts the page fits its window's width: the page does not scroll sideways, and no element shown
 * reaches past either edge of the window or scrolls sideways inside its own box (a table in a
 * scrolling region, which the page's width alone does not reveal). Elements visually hidden for
 * screen readers (inside a `clip`ped box) and form fields (whose text scrolls inside them) are not
 * regions a person sees or scrolls.
 */
export async function assertFitsWidth(page: Page): Promise<void> {
  const { scroll, width, outside } = await page.evaluate(() => {
    const browser = globalThis as unknown as PageWindow;
    // No named functions in here: the test's compiler would wrap them in a helper the page lacks.
    const outside: string[] = [];
    for (const element of browser.document.body.querySelectorAll('*')) {
      const box = element.getBoundingClientRect();
      if ((box.width === 0 && box.height === 0) || !element.checkVisibility({ visibilityProperty: true }))
        continue;
      let clipped = false;
      for (let at: PageElement | null = element; at && !clipped; at = at.parentElement)
        clipped = browser.getComputedStyle(at).clip !== 'auto';
      if (clipped) continue;
      const name = `${element.tagName.toLowerCase()}${element.className ? `.${String(element.className).replaceAll(' ', '.')}` : ''} “${(element.textContent ?? '').trim().slice(0, 40)}”`;
      if (box.left < -0.5 || box.right > browser.innerWidth + 0.5)
        outside.push(`${name} spans ${Math.round(box.left)}..${Math.round(box.right)} px`);
      const field = ['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName);
      const overflow = browser.getComputedStyle(element).overflowX;
      if (!field && overflow !== 'visible' && element.scrollWidth > element.clientWidth + 1)
        outside.push(`${name} scrolls sideways: ${element.scrollWidth} px in ${element.clientWidth} px`);
    }
    return { scroll: browser.document.documentElement.scrollWidth, width: browser.innerWidth, outside };
  });
  assert.ok(scroll <= width, `the page is ${scroll} px wide in a ${width} px window`);
  assert.deepEqual(outside, [], `elements wider than the ${width} px window`);
}

/** What `assertFieldsWhole` reads of a form field besides `PageElement`. */
interface PageField extends PageElement {
  id: string;
  placeholder: string;
}

/**
 * Asserts each caption of the main view's fields sits with its field (beside it on the same line, or
 * just above it) and each placeholder shows whole (its text, in the field's font, fits inside the
 * field's padding). Returns the number of fields checked.
 */
export async function assertFieldsWhole(page: Page): Promise<number> {
  const { problems, fields } = await page.evaluate(() => {
    const browser = globalThis as unknown as PageWindow & {
      document: { createElement(tag: 'canvas'): { getContext(kind: '2d'): CanvasContext } };
    };
    interface CanvasContext {
      font: string;
      measureText(text: string): { width: number };
    }
    const problems: string[] = [];
    let fields = 0;
    const context = browser.document.createElement('canvas').getContext('2d');
    for (const field of browser.document.body.querySelectorAll(
      'main input:not([type=checkbox]):not([type=file]), main select, main textarea',
    ) as Iterable<PageField>) {
      if (!field.checkVisibility({ visibilityProperty: true }) || !field.id) continue;
      fields++;
      const label = browser.document.body.querySelector(`label[for="${field.id}"]`);
      const box = field.getBoundingClientRect();
      if (label) {
        const caption = label.getBoundingClientRect();
        const beside =
          caption.top < box.bottom && caption.bottom > box.top && Math.abs(box.left - caption.right) <= 16;
        const above = caption.bottom <= box.top + 1 && box.top - caption.bottom <= 16;
        if (!beside && !above)
          problems.push(
            `“${label.textContent}” at ${Math.round(caption.left)},${Math.round(caption.top)} is apart from #${field.id} at ${Math.round(box.left)},${Math.round(box.top)}`,
          );
      }
      if (field.placeholder) {
        const style = browser.getComputedStyle(field) as unknown as {
          font: string;
          paddingLeft: string;
          paddingRight: string;
          borderLeftWidth: string;
          borderRightWidth: string;
        };
        context.font = style.font;
        const room =
          box.width -
          parseFloat(style.paddingLeft) -
          parseFloat(style.paddingRight) -
          parseFloat(style.borderLeftWidth) -
          parseFloat(style.borderRightWidth);
        const needed = context.measureText(field.placeholder).width;
        if (needed > room)
          problems.push(
            `#${field.id}'s placeholder needs ${Math.ceil(needed)} px, has ${Math.floor(room)} px`,
          );
      }
    }
    return { problems, fields };
  });
  assert.deepEqual(problems, []);
  return fields;
}

/**
 * Asserts every table of the page is laid out as labelled cards: each body cell shows its column's
 * name (generated text: its `data-label` as `::before` content, since the header row is hidden on a
 * phone) in a first column of its own, and its value on screen beside it. Returns the number of
 * cells checked.
 */
export async function assertLabelledCards(page: Page): Promise<number> {
  const { problems, cells } = await page.evaluate(() => {
    const browser = globalThis as unknown as PageWindow;
    const problems: string[] = [];
    let cells = 0;
    for (const table of browser.document.body.querySelectorAll('main table')) {
      const headers = [...table.querySelectorAll('thead th')].map((th) => th.textContent);
      for (const [row, tr] of [...table.querySelectorAll('tbody tr')].entries()) {
        if (tr.querySelector('td.empty')) continue;
        for (const [column, td] of [...tr.querySelectorAll('td')].entries()) {
          cells++;
          const where = `${table.querySelector('caption')?.textContent}, row ${row + 1}, column ${column + 1}`;
          const label = browser.getComputedStyle(td, '::before');
          const value = td.querySelector('.cell-value');
          const cell = td.getBoundingClientRect();
          const box = value?.getBoundingClientRect();
          if (td.getAttribute('data-label') !== headers[column])
            problems.push(`${where}: labelled “${td.getAttribute('data-label')}”, not “${headers[column]}”`);
          // The computed content is the label's text, then its empty alternative for screen readers.
          if (label.display === 'none' || label.content !== `${JSON.stringify(headers[column])} / ""`)
            problems.push(`${where}: no label shown (::before is ${label.display}, “${label.content}”)`);
          // The label's column: the value starts to the right of it, and both are on screen.
          if (!box || box.width === 0 || box.height === 0 || box.left - cell.left < 80)
            problems.push(`${where}: the value is not beside its label`);
          if (
            !td.checkVisibility({ visibilityProperty: true }) ||
            cell.left < 0 ||
            cell.right > browser.innerWidth
          )
            problems.push(`${where}: the card is not on screen`);
        }
      }
    }
    return { problems, cells };
  });
  assert.deepEqual(problems, []);
  return cells;
}

/**
 * Answers the page's previews as the service answers a token without ingestions:write (403), so a
 * test measures how the page reads a file, not the service. The import view needs a token with
 * that scope to be shown at all (docs/ui.md, Scopes), so the refusal is the test's own.
 */
export async function refusePreviews(page: Page): Promise<void> {
  await page.route('**/products/ingestions/preview', (route) =>
    route.fulfill({
      status: 403,
      contentType: 'application/problem+json',
      body: JSON.stringify({
        type: 'about:blank',
        title: 'Forbidden',
        status: 403,
        detail: 'The token lacks the scope "ingestions:write".',
      }),
    }),
  );
}

/**
 * Saves a screenshot of `page` as test/ui/screenshots/<name>.png (after scrolling `scrollTo` into
 * view). The views' pictures of docs/ui.md are those with `docs`: with `UI_DOCS_SCREENSHOTS=1` they
 * are also written there, reduced to a 128-colour palette to keep the repository small.
 */
export async function screenshot(
  page: Page,
  name: string,
  { scrollTo, docs = false }: { scrollTo?: Locator; docs?: boolean } = {},
): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  if (scrollTo)
    await scrollTo.evaluate((element) => (element as { scrollIntoView(): void }).scrollIntoView());
  const png = await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
  if (docs && process.env.UI_DOCS_SCREENSHOTS === '1') {
    await mkdir(DOCS_SCREENSHOTS, { recursive: true });
    await sharp(png)
      .png({ palette: true, colours: 128, compressionLevel: 9, effort: 8 })
      .toFile(path.join(DOCS_SCREENSHOTS, `${name}.png`));
  }
}

/**
 * Runs a browser scenario on `page` and screenshots it whatever happens: `<name>.png` on success,
 * `<name>-failed.png` (and the error rethrown) on failure.
 */
export async function scenario(
  _t: TestContext,
  page: Page,
  name: string,
  body: () => Promise<void>,
): Promise<void> {
  try {
    await body();
    assertCleanPage(page);
  } catch (error) {
    await screenshot(page, `${name}-failed`).catch(() => undefined);
    throw error;
  }
  await screenshot(page, name);
}

/** Submits `items` labelled `label` (docs/reference.md §11.1) and waits for the batch to finish; returns its id. */
export async function submitLabelled(
  api: TestService,
  token: string,
  items: unknown[],
  label: string,
): Promise<string> {
  const batchId = await api.submit(token, items, label);
  await api.waitForTerminal(token, batchId);
  return batchId;
}
