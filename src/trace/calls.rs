//! The API call that started each GPU activity, by correlation id (the earliest call when a
//! runtime call and the driver call under it share one). CUPTI numbers correlation ids from 1
//! upward in each process, so a table indexed by id is used when the ids are that dense, a hash
//! map otherwise.

use super::workload::{ApiCall, ProcessTrace};
use std::collections::HashMap;

pub struct CallIndex<'a> {
    calls: &'a [ApiCall],
    /// Call index + 1 per correlation id (0: none), when dense.
    dense: Vec<u32>,
    sparse: HashMap<u32, u32>,
}

impl<'a> CallIndex<'a> {
    pub fn new(p: &'a ProcessTrace) -> Self {
        let calls = p.api.as_slice();
        let max = calls.iter().map(|c| c.correlation_id).max().unwrap_or(0) as usize;
        let dense_ok = max <= 4 * calls.len() + 1024;
        let mut ix = CallIndex {
            calls,
            dense: if dense_ok {
                vec![0; max + 1]
            } else {
                Vec::new()
            },
            sparse: HashMap::new(),
        };
        for (i, c) in calls.iter().enumerate() {
            if c.correlation_id == 0 {
                continue;
            }
            let earlier = ix.index(c.correlation_id);
            if earlier.is_some_and(|e| calls[e].start_ns <= c.start_ns) {
                continue;
            }
            let slot = i as u32 + 1;
            if dense_ok {
                ix.dense[c.correlation_id as usize] = slot;
            } else {
                ix.sparse.insert(c.correlation_id, slot);
            }
        }
        ix
    }

    fn index(&self, corr: u32) -> Option<usize> {
        let slot = if self.dense.is_empty() {
            self.sparse.get(&corr).copied().unwrap_or(0)
        } else {
            self.dense.get(corr as usize).copied().unwrap_or(0)
        };
        (slot > 0).then(|| slot as usize - 1)
    }

    /// The call with correlation id `corr` (none for 0).
    pub fn get(&self, corr: u32) -> Option<&'a ApiCall> {
        if corr == 0 {
            return None;
        }
        self.index(corr).map(|i| &self.calls[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(corr: u32, start: u64) -> ApiCall {
        ApiCall {
            driver: false,
            name: "c".into(),
            start_ns: start,
            end_ns: start + 1,
            tid: 1,
            correlation_id: corr,
            cbid: 0,
            return_value: 0,
        }
    }

    #[test]
    fn the_earliest_call_of_an_id_is_found_dense_or_sparse() {
        for big in [0u32, 4_000_000_000] {
            let p = ProcessTrace {
                api: vec![
                    call(big + 3, 50),
                    call(big + 3, 40),
                    call(big + 7, 10),
                    call(0, 5),
                ],
                ..Default::default()
            };
            let ix = CallIndex::new(&p);
            assert_eq!(ix.get(big + 3).map(|c| c.start_ns), Some(40));
            assert_eq!(ix.get(big + 7).map(|c| c.start_ns), Some(10));
            assert!(ix.get(big + 4).is_none() && ix.get(0).is_none());
            assert!(ix.get(u32::MAX).is_none());
            assert_eq!(ix.dense.is_empty(), big > 0);
        }
    }
}
