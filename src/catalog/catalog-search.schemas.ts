import { Type } from '@sinclair/typebox';
import { FurnitureEnum } from './product-schema.ts';

/**
 * The query parameters that make `GET /products` a search (docs/reference.md §11.7), validated by the route
 * like every other parameter: a value outside its enumeration or range is a 400 naming it.
 */
export const SearchQueryProperties = {
  q: Type.Optional(
    Type.String({
      maxLength: 1000,
      description:
        'Words (runs of letters and digits) that must all match words of name, external_id, a brand or a sku; ' +
        'case- and accent-insensitive, any order, the last one as a prefix',
    }),
  ),
  type: Type.Optional(FurnitureEnum.type('Only products of this type')),
  style: Type.Optional(FurnitureEnum.style('Only products of this style')),
  sub_type: Type.Optional(FurnitureEnum.sub_type('Only products of this sub_type')),
  color: Type.Optional(FurnitureEnum.color('Only products with a variant of this color')),
  min_price: Type.Optional(
    Type.Number({ minimum: 0, description: 'Only products with a variant priced at least this (inclusive)' }),
  ),
  max_price: Type.Optional(
    Type.Number({ minimum: 0, description: 'Only products with a variant priced at most this (inclusive)' }),
  ),
};
