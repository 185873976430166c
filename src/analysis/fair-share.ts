/**
 * A capacity that owners (tenants) share in turn. Each claim has a weight; claims are granted while
 * their weights fit. When claims wait, the owners that have some are served in turn, each owner's
 * own claims in the order they came; an owner just served goes to the back of the turn. A claim
 * that does not fit yet holds back those behind it, so a heavy claim is not passed over for ever by
 * light ones.
 */
export interface FairShare {
  /** Resolves once `weight` units are the caller's, with the function that gives them back. */
  acquire(owner: string, weight: number): Promise<() => void>;
  /** Units granted now. */
  readonly used: number;
  /** Claims waiting now. */
  readonly waiting: number;
}

interface Claim {
  weight: number;
  grant: () => void;
}

export function createFairShare(capacity: number): FairShare {
  let used = 0;
  let waitingCount = 0;
  // Waiting claims by owner; the map's order is the turn order.
  const waiting = new Map<string, Claim[]>();

  const dispatch = () => {
    for (const [owner, claims] of waiting) {
      const claim = claims[0]!;
      if (used + claim.weight > capacity) return;
      claims.shift();
      waiting.delete(owner);
      if (claims.length > 0) waiting.set(owner, claims);
      waitingCount -= 1;
      used += claim.weight;
      claim.grant();
    }
  };

  return {
    acquire(owner, weight) {
      if (!(weight > 0 && weight <= capacity)) {
        return Promise.reject(new RangeError(`a claim of ${weight} cannot fit a capacity of ${capacity}`));
      }
      return new Promise((resolve) => {
        let given = false;
        const giveBack = () => {
          if (given) return;
          given = true;
          used -= weight;
          dispatch();
        };
        const claim = { weight, grant: () => resolve(giveBack) };
        const claims = waiting.get(owner);
        if (claims) claims.push(claim);
        else waiting.set(owner, [claim]);
        waitingCount += 1;
        dispatch();
      });
    },
    get used() {
      return used;
    },
    get waiting() {
      return waitingCount;
    },
  };
}
