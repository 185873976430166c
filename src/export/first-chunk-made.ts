/**
 * `chunks` with its first chunk already made, before the answer's headers are sent: a failure
 * before the first byte (the XLSX export's temporary file cannot be created, the first page cannot
 * be read) is then answered as a problem, not as an attachment that ends at once. An iterator object
 * rather than a generator, so that a client leaving before the stream starts still returns `chunks`
 * (and the XLSX writer removes its temporary file): a generator not yet started skips its `finally`.
 */
export async function withFirstChunkMade<T>(chunks: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  const iterator = chunks[Symbol.asyncIterator]();
  let first: IteratorResult<T> | null = await iterator.next();
  return {
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        const made = first;
        first = null;
        return made ?? iterator.next();
      },
      return: async () => {
        first = null;
        return (await iterator.return?.()) ?? { done: true, value: undefined };
      },
    }),
  };
}
