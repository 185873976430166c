import { errorText, getJson } from '../api.ts';
import type { Analysis } from '../api-types.ts';
import { h, replace } from '../dom.ts';
import type { View } from '../view.ts';

/** The analyzer's limit per request (docs/reference.md §8). */
const MAX_URLS = 10;

type ImageAnalysis = Analysis['images'][number];

/**
 * Whether the service could not analyze the image (fetch failed, not an image, too large…): its
 * entry is then `isStageable: false`, `roomType: "unknown"`, `confidence: 0`, the reason in
 * `details` (docs/analyzer.md). An analyzed image's confidence is never 0: the service keeps it
 * within 0.01–0.99 (src/analysis/stageability.ts).
 */
export function notAnalyzed(image: ImageAnalysis): boolean {
  return image.confidence === 0 && image.roomType === 'unknown' && !image.isStageable;
}

/** One image the service could not analyze: why, and no verdict, percentage or picture. */
function failedCard(image: ImageAnalysis, position: number): HTMLElement {
  return h(
    'li',
    { class: 'card analysis not-analyzed' },
    h('div', { class: 'no-picture', role: 'img', 'aria-label': `Image ${position + 1}: not analyzed` }),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Verdict'),
      h('dd', {}, `Could not analyze: ${image.details}`),
      h('dt', {}, 'URL'),
      h('dd', { class: 'url' }, image.imageUrl),
    ),
  );
}

/** One analyzed image: the picture (loaded by the browser) beside its verdict. */
function imageCard(image: ImageAnalysis, position: number): HTMLElement {
  if (notAnalyzed(image)) return failedCard(image, position);
  const percent = Math.round(image.confidence * 100);
  return h(
    'li',
    { class: 'card analysis' },
    h('img', {
      src: image.imageUrl,
      alt: `Image ${position + 1}: ${image.roomType.replaceAll('_', ' ')}`,
      referrerpolicy: 'no-referrer',
      width: 240,
      height: 180,
    }),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Verdict'),
      // `confidence` is how sure the analyzer is of this verdict (stageable or not), not of the room
      // type: it sits with the verdict it belongs to.
      h(
        'dd',
        {},
        h(
          'span',
          { class: `badge ${image.isStageable ? 'stageable' : 'not-stageable'}` },
          image.isStageable ? 'stageable' : 'not stageable',
        ),
        ' ',
        h('meter', {
          min: 0,
          max: 1,
          value: image.confidence,
          'aria-label': `Confidence in the verdict on image ${position + 1}`,
        }),
        ` ${percent}% sure`,
      ),
      h('dt', {}, 'Room type'),
      h('dd', {}, image.roomType.replaceAll('_', ' ')),
      h('dt', {}, 'Details'),
      h('dd', {}, image.details),
      h('dt', {}, 'URL'),
      h('dd', { class: 'url' }, image.imageUrl),
    ),
  );
}

/**
 * The mean confidence over the analyzed images only, saying what it covers: "87% over 8 analyzed ·
 * 2 could not be analyzed". The service's own `summary.confidence` counts an image it could not
 * analyze as 0, which would pull the mean down without saying so.
 */
export function meanConfidenceText(images: ImageAnalysis[]): string {
  const analyzed = images.filter((image) => !notAnalyzed(image));
  const failed = images.length - analyzed.length;
  const failedText = failed === 0 ? '' : ` · ${failed} could not be analyzed`;
  if (analyzed.length === 0) return `none analyzed${failedText}`;
  const mean = analyzed.reduce((sum, image) => sum + image.confidence, 0) / analyzed.length;
  return `${Math.round(mean * 100)}% over ${analyzed.length} analyzed${failedText}`;
}

/** The summary: counts (an image not analyzed has no verdict), the mean and the room types. */
function summaryList(images: ImageAnalysis[], summary: Analysis['summary']): HTMLElement {
  const failed = images.filter(notAnalyzed).length;
  return h(
    'dl',
    { class: 'counts', 'data-testid': 'analysis-summary' },
    h('dt', {}, 'Images'),
    h('dd', {}, summary.totalImages),
    h('dt', {}, 'Stageable'),
    h('dd', {}, summary.stageableImages),
    h('dt', {}, 'Not stageable'),
    h('dd', {}, summary.nonStageableImages - failed),
    h('dt', {}, 'Mean confidence'),
    h('dd', {}, meanConfidenceText(images)),
    h('dt', {}, 'Room types'),
    h('dd', {}, summary.roomTypes.length ? summary.roomTypes.join(', ').replaceAll('_', ' ') : '—'),
  );
}

/** Paste up to 10 image URLs; each image is shown beside its stageability verdict, then the summary. */
export const analyzerView: View = (main) => {
  const message = h('p', { class: 'error', role: 'alert' });
  const status = h('p', { role: 'status' });
  const results = h('div', { 'aria-live': 'polite' });
  const urls = h('textarea', {
    id: 'image-urls',
    rows: 6,
    required: true,
    spellcheck: 'false',
    'aria-describedby': 'urls-help',
  });
  const button = h('button', { type: 'submit', class: 'primary' }, 'Analyze');

  async function analyze() {
    const imageUrls = urls.value
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    if (imageUrls.length === 0 || imageUrls.length > MAX_URLS) {
      message.textContent = `Give between 1 and ${MAX_URLS} image URLs, one per line (${imageUrls.length} given).`;
      return;
    }
    message.textContent = '';
    button.disabled = true;
    status.textContent = `Analyzing ${imageUrls.length} image(s)…`;
    try {
      const analysis = await getJson<Analysis>('/analysis/stageability/multiple', {
        method: 'POST',
        json: { imageUrls },
      });
      const { summary } = analysis;
      replace(
        results,
        h('h2', {}, 'Summary'),
        summaryList(analysis.images, summary),
        h('h2', {}, 'Images'),
        h('ul', { class: 'analysis-list' }, analysis.images.map(imageCard)),
      );
      status.textContent = `Analyzed ${analysis.images.length} image(s).`;
    } catch (error) {
      status.textContent = '';
      message.textContent = errorText(error);
    } finally {
      button.disabled = false;
    }
  }

  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: (event) => {
        event.preventDefault();
        void analyze();
      },
    },
    h('label', { for: 'image-urls' }, 'Image URLs'),
    urls,
    h('p', { id: 'urls-help', class: 'help' }, `One URL per line, up to ${MAX_URLS}.`),
    button,
  );
  main.append(h('h1', {}, 'Analyzer'), form, message, status, results);
};
