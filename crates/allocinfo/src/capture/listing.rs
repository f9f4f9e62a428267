//! `allocinfo capture list --json`: the capture control file's listing
//! (its model and parser are `allocinfo_format::capture::listing`) as one
//! JSON object.

use allocinfo_format::capture::listing::Listing;
use serde_json::{Value, json};

/// The listing as one JSON object: `pool` (or null), `selections`, each
/// with its `sites`.
pub fn json(l: &Listing) -> Value {
    let selections: Vec<Value> = l
        .selections
        .iter()
        .map(|s| {
            let sites: Vec<Value> = l
                .sites
                .iter()
                .filter(|site| site.selection == s.id)
                .map(|site| {
                    json!({
                        "file": site.file, "line": site.line, "module": site.module,
                        "function": site.function, "live": site.live,
                        "live_bytes": site.live_bytes, "untracked": site.untracked,
                        "untracked_bytes": site.untracked_bytes,
                    })
                })
                .collect();
            json!({"id": s.id, "select": s.select, "unmarked": s.unmarked, "sites": sites})
        })
        .collect();
    let pool = l.pool.map(|p| {
        json!({"limit": p.limit, "size": p.size, "used": p.used,
               "dropped": p.dropped, "busy": p.busy})
    });
    json!({"pool": pool, "selections": selections})
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocinfo_format::capture::listing::parse;

    const LISTING: &str = "capture limit=4096 size=4096 used=5 dropped=1 busy=2\n\
        selection 1 sites=1 unmarked=0 select=module:t func:hold\n\
        site selection=1 live=5 live_bytes=2560 untracked=3 untracked_bytes=96 lib/t.c:172 [t] func:hold\n\
        selection 3 sites=0 unmarked=2 select=mm/slub.c\n";

    #[test]
    fn json_has_the_pool_and_each_selection_with_its_sites() {
        let l = parse(LISTING).unwrap();
        let v = json(&l);
        assert_eq!(v["pool"]["dropped"], 1);
        assert_eq!(v["selections"][0]["sites"][0]["live_bytes"], 2560);
        assert_eq!(v["selections"][1]["sites"], json!([]));
        assert_eq!(
            json(&parse("").unwrap()),
            json!({"pool": null, "selections": []})
        );
    }
}
