import { errorText, getJson } from '../api.ts';
import type { Analysis } from '../api-types.ts';
import { h, replace } from '../dom.ts';
import type { View } from '../view.ts';

/** The analyzer's limit per request (CONTRACT §8). */
const MAX_URLS = 10;

/** One analyzed image: the picture (loaded by the browser) beside its verdict. */
function imageCard(image: Analysis['images'][number], position: number): HTMLElement {
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
        h(
          'dl',
          { class: 'counts', 'data-testid': 'analysis-summary' },
          h('dt', {}, 'Images'),
          h('dd', {}, summary.totalImages),
          h('dt', {}, 'Stageable'),
          h('dd', {}, summary.stageableImages),
          h('dt', {}, 'Not stageable'),
          h('dd', {}, summary.nonStageableImages),
          h('dt', {}, 'Mean confidence'),
          h('dd', {}, `${Math.round(summary.confidence * 100)}%`),
          h('dt', {}, 'Room types'),
          h('dd', {}, summary.roomTypes.length ? summary.roomTypes.join(', ').replaceAll('_', ' ') : '—'),
        ),
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
