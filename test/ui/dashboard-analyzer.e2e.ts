/**
 * The analyzer view in headless Chromium against the whole service with its real vision model: two
 * images served from loopback, each shown (loaded by the browser) beside the service's verdict.
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
  });
});
after(async () => {
  await images?.close();
});

const world = dashboardWorldForFile({ ANALYSIS_ALLOW_PRIVATE_HOSTS: 'true' }, { analyzer: true });

browserTest('two loopback images are shown beside their verdicts and the summary', async (t) => {
  const token = await world.api.token(world.api.tenant('analyzer'));
  const urls = [images.url('/room.jpg'), images.url('/tiny.png')];
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
      await page.getByRole('status').filter({ hasText: 'Analyzed 2 image(s).' }).waitFor({ timeout: 60_000 });
      const cards = page.getByRole('listitem').filter({ has: page.getByRole('img') });
      assert.equal(await cards.count(), 2);
      for (const [index, image] of analysis.images.entries()) {
        const text = await cards.nth(index).innerText();
        assert.ok(text.includes(image.details), `card ${index} shows “${image.details}”`);
        // The confidence belongs to the verdict (stageable or not), and is shown with it.
        const verdictText = await cards.nth(index).locator('dt:text-is("Verdict") + dd').innerText();
        assert.equal(
          verdictText.replace(/\s+/g, ' ').trim(),
          `${image.isStageable ? 'stageable' : 'not stageable'} ${Math.round(image.confidence * 100)}% sure`,
        );
        const roomText = await cards.nth(index).locator('dt:text-is("Room type") + dd').innerText();
        assert.equal(roomText, image.roomType.replaceAll('_', ' '));
        assert.equal(
          Number(await cards.nth(index).getByRole('meter').getAttribute('value')),
          image.confidence,
        );
      }
      assert.equal(analysis.images[1]!.isStageable, false, 'a 96×64 picture is too small to stage');
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
      assert.equal(
        summary,
        `Images 2 Stageable ${expected.stageableImages} Not stageable ${expected.nonStageableImages} ` +
          `Mean confidence ${Math.round(expected.confidence * 100)}% ` +
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
});
