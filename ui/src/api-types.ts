/**
 * The shapes the dashboard reads, from the service's own schemas (type-only imports, erased from the
 * bundle), so they cannot drift from what the routes answer. The analyzer's answer (docs/reference.md §8) is
 * written out: its schema's module imports the token verification, which is not for the browser.
 */
import type { Static } from '@sinclair/typebox';
import type {
  BatchErrorPage,
  BatchStatusRecord,
  IngestionAccepted,
} from '../../src/ingestion/ingestion.schemas.ts';
import type { ProductView } from '../../src/catalog/product-schema.ts';
import type { ErrorSummarySchema } from '../../src/ingestion/error-reports.schemas.ts';
import type { PreviewEntrySchema, PreviewResponse } from '../../src/ingestion/preview.schemas.ts';
import type { Delivery, Endpoint } from '../../src/webhooks/webhook.schemas.ts';
import type { HistoryEntry } from '../../src/catalog/history.schemas.ts';

export type BatchStatus = Static<typeof BatchStatusRecord>;
/** One failed item of the errors page (docs/reference.md §7). */
export type ItemErrors = Static<typeof BatchErrorPage>['data'][number];
export type Product = ProductView;

/** `POST /products/ingestions` → 202. */
export type Accepted = Static<typeof IngestionAccepted>;

/** One error of an item: `{field, code, message}`. */
export type FieldError = ItemErrors['errors'][number];

/** docs/reference.md §10.3: `POST /products/ingestions/preview`. */
export type Preview = Static<typeof PreviewResponse>;

/** One item of a preview. */
export type PreviewEntry = Static<typeof PreviewEntrySchema>;

/** docs/reference.md §10.4: `GET /products/ingestions/{id}/errors/summary`. */
export type ErrorSummary = Static<typeof ErrorSummarySchema>;

/** docs/reference.md §11.3: one recorded change of a product. */
export type ProductChange = HistoryEntry;

/** docs/reference.md §10.1: a webhook endpoint; the secret only on creation (and rotation, `SecretRotated`). */
export type WebhookEndpoint = Static<typeof Endpoint> & { secret?: string };

/** docs/reference.md §10.1: one delivery of an endpoint. */
export type WebhookDelivery = Static<typeof Delivery>;

/** docs/reference.md §8: the analyzer's answer. */
export interface Analysis {
  images: Array<{
    imageUrl: string;
    isStageable: boolean;
    roomType: string;
    confidence: number;
    details: string;
  }>;
  summary: {
    totalImages: number;
    stageableImages: number;
    nonStageableImages: number;
    confidence: number;
    roomTypes: string[];
  };
}
