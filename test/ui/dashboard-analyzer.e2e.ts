/**
 * The analyzer view in headless Chromium against the whole service with its real vision model: two
 * images served from loopback, each shown (loaded by the browser) beside the service's verdict, and
 * two URLs it could not analyze (a 404, a page that is not an image), each with why and no verdict.
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { roomPhoto, serve, solid, startServer } from '../analysis/analysis-helpers.ts';
import type { Analysis } from '../../ui/src/api-types.ts';
import {
  assertAccessible,
  assertFitsWidth,
  browserTest,
  dashboardWorldForFile,
  PHONE,
  scenario,
  screenshot,
} from './dashboard-browser.ts';

let images: Awaited<ReturnType<typeof startServer>>;

before(async () => {
  images = await startServer({
    '/room.jpg': serve(await roomPhoto(1024, 768)),
    '/tiny.png': serve(await solid(96, 64, 30), 'image/png'),
    '/page.html': serve('<!doctype html><title>Not a picture</title>', 'text/html'),
  });
});
after(async () => {
  await images?.close();
});

const world = dashboardWorldForFile({ ANALYSIS_ALLOW_PRIVATE_HOSTS: 'true' }, { analyzer: true });

browserTest(
  'two loopback images beside their verdicts, two that could not be analyzed, and the summary',
  async (t) => {
    const token = await world.api.token(world.api.tenant('analyzer'));
    const urls = [
      images.url('/room.jpg'),
      images.url('/missing.jpg'),
      images.url('/tiny.png'),
      images.url('/page.html'),
    ];
    for (const viewport of [undefined, PHONE]) {
      const page = await world.open(token, '#/analyzer', viewport);
      await scenario(t, page, viewport ? 'analyzer-phone' : 'analyzer', async () => {
        await page.getByLabel('Image URLs').fill(urls.join('\n'));
        const [response] = await Promise.all([
          page.waitForResponse((res) => res.url().endsWith('/analysis/stageability/multiple')),
          page.getByRole('button', { name: 'Analyze' }).click(),
        ]);
        assert.equal(response.status(), 200);
        const analysis = (await response.json()) as Analysis;
        assert.deepEqual(
          analysis.images.map((image) => image.imageUrl),
          urls,
        );
        await page
          .getByRole('status')
          .filter({ hasText: 'Analyzed 4 image(s).' })
          .waitFor({ timeout: 60_000 });
        const cards = page.locator('.analysis-list > li');
        assert.equal(await cards.count(), 4);
        for (const [index, image] of analysis.images.entries()) {
          const card = cards.nth(index);
          const verdictText = (await card.locator('dt:text-is("Verdict") + dd').innerText())
            .replace(/\s+/g, ' ')
            .trim();
          if (index === 1 || index === 3) {
            // Not analyzed: why, and no verdict, percentage, meter, room type or picture.
            assert.equal(
              verdictText,
              index === 1
                ? 'Could not analyze: The image server answered HTTP 404'
                : 'Could not analyze: Not an image: the server sent text/html',
            );
            assert.doesNotMatch(await card.innerText(), /%|stageable|Room type/);
            assert.equal(await card.getByRole('meter').count(), 0);
            assert.equal(await card.locator('img').count(), 0);
            continue;
          }
          const text = await card.innerText();
          assert.ok(text.includes(image.details), `card ${index} shows “${image.details}”`);
          // The confidence belongs to the verdict (stageable or not), and is shown with it.
          assert.equal(
            verdictText,
            `${image.isStageable ? 'stageable' : 'not stageable'} ${Math.round(image.confidence * 100)}% sure`,
          );
          const roomText = await card.locator('dt:text-is("Room type") + dd').innerText();
          assert.equal(roomText, image.roomType.replaceAll('_', ' '));
          assert.equal(Number(await card.getByRole('meter').getAttribute('value')), image.confidence);
        }
        assert.equal(analysis.images[2]!.isStageable, false, 'a 96×64 picture is too small to stage');
        // The pictures come from a loopback http: server; the page's CSP lets them load.
        await page.waitForFunction(() =>
          Array.from(
            (
              globalThis as unknown as {
                document: { images: Array<{ complete: boolean; naturalWidth: number }> };
              }
            ).document.images,
          ).every((image) => image.complete && image.naturalWidth > 0),
        );
        const summary = (await page.getByTestId('analysis-summary').innerText()).replace(/\s+/g, ' ');
        const { summary: expected } = analysis;
        // The mean covers the two analyzed images only, and says so.
        const [room, tiny] = [analysis.images[0]!, analysis.images[2]!];
        const mean = Math.round(((room.confidence + tiny.confidence) / 2) * 100);
        assert.equal(expected.nonStageableImages, 4 - expected.stageableImages);
        assert.equal(
          summary,
          `Images 4 Stageable ${expected.stageableImages} Not stageable ${2 - expected.stageableImages} ` +
            `Mean confidence ${mean}% over 2 analyzed · 2 could not be analyzed ` +
            `Room types ${expected.roomTypes.join(', ').replaceAll('_', ' ') || '—'}`,
        );
        await assertAccessible(page, 'analyzer');
        if (viewport) {
          await assertFitsWidth(page);
          await screenshot(page, 'analyzer-phone', { docs: true });
        } else
          await screenshot(page, 'analyzer', {
            scrollTo: page.getByRole('heading', { name: 'Summary' }),
            docs: true,
          });
      });
    }
  },
);
