//! One processor's cache: set-associative, LRU, line-granular. Holds tags and protocol states
//! only; data lives in the single backing store (functional-first).

use super::protocol::CacheState;

/// Line number: byte address / line size.
pub(crate) type Line = u64;

const EMPTY: Line = Line::MAX;

#[derive(Clone)]
pub(crate) struct Cache {
    sets: u64,
    ways: usize,
    /// `tags[set * ways + way]`: the line held there, or EMPTY.
    tags: Vec<Line>,
    states: Vec<CacheState>,
    /// Last-use stamps for LRU (only read when ways > 1).
    used: Vec<u64>,
    clock: u64,
    /// The line was brought in by a prefetch and no access has used it yet.
    unused_prefetch: Vec<bool>,
}

impl Cache {
    pub fn new(lines: u64, ways: usize) -> Cache {
        let sets = (lines / ways as u64).max(1);
        let n = (sets as usize) * ways;
        Cache {
            sets,
            ways,
            tags: vec![EMPTY; n],
            states: vec![CacheState::Invalid; n],
            used: vec![0; n],
            clock: 0,
            unused_prefetch: vec![false; n],
        }
    }

    #[inline]
    fn slot(&self, line: Line) -> Option<usize> {
        let base = (line % self.sets) as usize * self.ways;
        (base..base + self.ways).find(|&i| self.tags[i] == line)
    }

    /// The line's state here (Invalid when absent).
    #[inline]
    pub fn state(&self, line: Line) -> CacheState {
        self.slot(line).map_or(CacheState::Invalid, |i| self.states[i])
    }

    /// Mark a use of a present line (LRU); returns whether this is the first use of a line a
    /// prefetch brought in (a useful prefetch).
    #[inline]
    pub fn touch(&mut self, line: Line) -> bool {
        let Some(i) = self.slot(line) else { return false };
        if self.ways > 1 {
            self.clock += 1;
            self.used[i] = self.clock;
        }
        std::mem::take(&mut self.unused_prefetch[i])
    }

    /// Change the state of a present line; Invalid removes it.
    pub fn set_state(&mut self, line: Line, s: CacheState) {
        if let Some(i) = self.slot(line) {
            if s == CacheState::Invalid {
                self.tags[i] = EMPTY;
                self.unused_prefetch[i] = false;
            }
            self.states[i] = s;
        }
    }

    /// What installing `line` needs: `Ok(None)` if a way is free or `line` is present,
    /// `Ok(Some(victim))` for the least recently used line that `keep` does not protect, or
    /// `Err(())` if every way holds a protected line (a conflict with lines that must stay).
    #[allow(clippy::result_unit_err)]
    pub fn victim(&self, line: Line, keep: impl Fn(Line) -> bool) -> Result<Option<(Line, CacheState)>, ()> {
        if self.slot(line).is_some() {
            return Ok(None);
        }
        let base = (line % self.sets) as usize * self.ways;
        let ways = base..base + self.ways;
        if ways.clone().any(|i| self.tags[i] == EMPTY) {
            return Ok(None);
        }
        let i = ways.filter(|&i| !keep(self.tags[i])).min_by_key(|&i| self.used[i]).ok_or(())?;
        Ok(Some((self.tags[i], self.states[i])))
    }

    /// Install `line` in state `s` (the victim, if any, must have been dealt with);
    /// `prefetched` when a prefetch brought it.
    pub fn install(&mut self, line: Line, s: CacheState, prefetched: bool) {
        let base = (line % self.sets) as usize * self.ways;
        let i = self
            .slot(line)
            .or_else(|| (base..base + self.ways).find(|&i| self.tags[i] == EMPTY))
            .unwrap_or_else(|| (base..base + self.ways).min_by_key(|&i| self.used[i]).expect("at least one way"));
        self.tags[i] = line;
        self.states[i] = s;
        self.clock += 1;
        self.used[i] = self.clock;
        self.unused_prefetch[i] = prefetched;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_mapped_conflicts_evict() {
        let mut c = Cache::new(4, 1);
        c.install(1, CacheState::Shared, false);
        assert_eq!(c.state(1), CacheState::Shared);
        assert_eq!(c.victim(5, |_| false), Ok(Some((1, CacheState::Shared))));
        assert_eq!(c.victim(5, |l| l == 1), Err(()), "the only way holds a line that must stay");
        c.install(5, CacheState::Modified, false);
        assert_eq!(c.state(1), CacheState::Invalid);
        assert_eq!(c.state(5), CacheState::Modified);
    }

    #[test]
    fn lru_picks_least_recently_used_way() {
        let mut c = Cache::new(4, 2); // 2 sets x 2 ways
        c.install(0, CacheState::Shared, false);
        c.install(2, CacheState::Shared, false);
        c.touch(0);
        assert_eq!(c.victim(4, |_| false), Ok(Some((2, CacheState::Shared))));
        assert_eq!(c.victim(4, |l| l == 2), Ok(Some((0, CacheState::Shared))), "a kept line is skipped");
        c.set_state(2, CacheState::Invalid);
        assert_eq!(c.victim(4, |_| false), Ok(None), "a freed way takes the new line");
    }

    #[test]
    fn a_prefetched_line_is_useful_once_and_only_until_lost() {
        let mut c = Cache::new(4, 1);
        c.install(1, CacheState::Shared, true);
        assert!(c.touch(1), "the first use of a prefetched line");
        assert!(!c.touch(1), "later uses are ordinary hits");
        c.install(2, CacheState::Shared, true);
        c.set_state(2, CacheState::Invalid);
        c.install(2, CacheState::Shared, false);
        assert!(!c.touch(2), "a prefetch lost before use was not useful");
        assert!(!c.touch(3), "an absent line");
    }
}
