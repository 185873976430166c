import { Type, type Static } from '@sinclair/typebox';
import { ROOM_TYPE_VALUES } from './scene-types.ts';

/** The stageability operation's bodies (spec operation 4, docs/reference.md §8): one source for its types. */

const RoomTypeSchema = Type.Union(
  ROOM_TYPE_VALUES.map((room) => Type.Literal(room)),
  {
    description:
      'Places365-style room type; `other` for a picture of none, `unknown` when it cannot be told.',
  },
);

/** Request body of `POST /analysis/stageability/multiple`. */
export const StageabilityRequest = Type.Object({
  imageUrls: Type.Array(Type.String({ description: 'http(s) URL of a photo' }), {
    minItems: 1,
    maxItems: 10,
  }),
});

/** One image's entry in the response (spec: image analysis object). */
const ImageAnalysisSchema = Type.Object({
  isStageable: Type.Boolean(),
  roomType: RoomTypeSchema,
  confidence: Type.Number({
    minimum: 0,
    maximum: 1,
    description: 'Probability that isStageable is right',
  }),
  details: Type.String({ description: 'One sentence a person can act on' }),
  imageUrl: Type.String(),
});
export type ImageAnalysis = Static<typeof ImageAnalysisSchema>;

/** The spec's summary object. */
const AnalysisSummarySchema = Type.Object({
  totalImages: Type.Integer(),
  stageableImages: Type.Integer(),
  nonStageableImages: Type.Integer(),
  confidence: Type.Number({ minimum: 0, maximum: 1, description: "Mean of the images' confidences" }),
  roomTypes: Type.Array(RoomTypeSchema, {
    description: 'Distinct room types in order of first appearance',
  }),
});
export type AnalysisSummary = Static<typeof AnalysisSummarySchema>;

/** Response body of `POST /analysis/stageability/multiple` (spec: image analysis result). */
export const StageabilityResponse = Type.Object({
  images: Type.Array(ImageAnalysisSchema),
  summary: AnalysisSummarySchema,
});

/** The response of the stageability operation, as the service returns it. */
export type AnalysisResult = Static<typeof StageabilityResponse>;

/** The spec's analysis error shape. */
export const AnalysisErrorBody = Type.Object({
  statusCode: Type.Integer(),
  message: Type.String(),
  error: Type.String(),
});
