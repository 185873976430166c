import { MAX_IMAGES_PER_VARIANT, type FullProductIngest } from '../catalog/product-schema.ts';
import type { ProductImageIngest, ProductVariantIngest } from '../catalog/product-schema.ts';

/** A stored image: `angle` is absent or null when none is stored. */
export interface StoredImage {
  url: string;
  angle?: number | null;
}

/** A stored variant in the ingest shape, with every stored image in merge order (any number of them). */
export type StoredVariant = Omit<ProductVariantIngest, 'images'> & { images: StoredImage[] };

/** A stored product in the ingest shape, no timestamps, variants in order of first creation. */
export type StoredProduct = Omit<FullProductIngest, 'variants'> & { variants: StoredVariant[] };

/** An image as an item sends it: `angle` only when one is stored (docs/reference.md §11.4). */
const ingestImage = ({ url, angle }: StoredImage): ProductImageIngest =>
  typeof angle === 'number' ? { url, angle } : { url };

/** A variant as an item sends it, with `images` (1–10 of them) only when there are any. */
function ingestVariant(variant: StoredVariant, images: readonly StoredImage[]): ProductVariantIngest {
  // Written field by field, in the spec's order, so a line reads as the spec's item does.
  const item: ProductVariantIngest = {
    sku: variant.sku,
    name: variant.name,
    item_url: variant.item_url,
    depth: variant.depth,
    height: variant.height,
    width: variant.width,
    weight: variant.weight,
    color: variant.color,
    price: variant.price,
    brand: variant.brand,
  };
  if (images.length > 0) item.images = images.map(ingestImage);
  return item;
}

const ingestProduct = (product: StoredProduct, variants: ProductVariantIngest[]): FullProductIngest => ({
  external_id: product.external_id,
  name: product.name,
  description: product.description,
  style: product.style,
  type: product.type,
  sub_type: product.sub_type,
  variants,
});

/**
 * A stored product as the items that recreate it (docs/reference.md §11.4), each a valid item. The first
 * holds every variant with its first 10 images. Merges may have stored more than one item's limit
 * of 10 on a variant: each further 10 follow as another item of the product holding only that
 * variant, in order, so that importing the items in order appends them behind the first 10 (docs/reference.md §5).
 */
export function ingestParts(product: StoredProduct): FullProductIngest[] {
  const parts = [
    ingestProduct(
      product,
      product.variants.map((variant) =>
        ingestVariant(variant, variant.images.slice(0, MAX_IMAGES_PER_VARIANT)),
      ),
    ),
  ];
  for (const variant of product.variants) {
    for (let from = MAX_IMAGES_PER_VARIANT; from < variant.images.length; from += MAX_IMAGES_PER_VARIANT) {
      const images = variant.images.slice(from, from + MAX_IMAGES_PER_VARIANT);
      parts.push(ingestProduct(product, [ingestVariant(variant, images)]));
    }
  }
  return parts;
}
