//! Integration tests of the sparse numerics on the real Harwell-Boeing matrices in
//! `shared/data/matrices` (beside the repository) and on generated matrices.

/// One module so that `cargo test sparse` selects these tests.
mod sparse_tests {
    use commlab_apps::sparse::{
        colour, colour_graph, colour_ordering, compress, edge_cut, fe_stiffness, group_colour_ordering, ichol0,
        invert_permutation, parse_matrix_market, partition, pcg, read_matrix_market, Compression, MtxErrorKind,
        MtxField, Partitioner, SymMatrix,
    };
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    fn matrix_path(name: &str) -> PathBuf {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/matrices")).join(name)
    }

    fn load(name: &str) -> SymMatrix {
        read_matrix_market(&matrix_path(name)).unwrap_or_else(|e| panic!("{e}")).0
    }

    fn assert_proper_colouring(a: &SymMatrix, c: &[u32]) {
        for i in 0..a.n {
            for &j in a.row(i).0 {
                assert!(j as usize == i || c[i] != c[j as usize], "edge ({i}, {j}) joins colour {}", c[i]);
            }
        }
    }

    /// A right-hand side with a known, rough solution: `b = A x_true`, `x_true[i] = sin(0.37 i) + 0.5`.
    /// (A constant `b` would be an eigenvector of the Laplacian-valued pattern matrices.)
    fn rough_rhs(a: &SymMatrix) -> Vec<f64> {
        let x_true: Vec<f64> = (0..a.n).map(|i| (i as f64 * 0.37).sin() + 0.5).collect();
        let mut b = vec![0.0; a.n];
        a.mul_vec(&x_true, &mut b);
        b
    }

    /// Relative residual `||b - A x|| / ||b||`, computed independently of `pcg`.
    fn rel_residual(a: &SymMatrix, b: &[f64], x: &[f64]) -> f64 {
        let mut ax = vec![0.0; a.n];
        a.mul_vec(x, &mut ax);
        let rnorm: f64 = ax.iter().zip(b).map(|(p, q)| (p - q) * (p - q)).sum::<f64>().sqrt();
        rnorm / b.iter().map(|v| v * v).sum::<f64>().sqrt()
    }

    /// Solves `A x = b` with IC(0)-PCG on the multicoloured permutation of `a` (of the scalar
    /// graph, or with `compressed` of the identical-row groups' quotient graph) to 1e-8 and
    /// checks the answer against the unpermuted matrix. Returns the iteration count.
    fn solve_multicoloured(a: &SymMatrix, b: &[f64], max_iter: usize, compressed: bool) -> usize {
        let ord = if compressed {
            let groups = compress(a);
            group_colour_ordering(&groups, &colour_graph(&groups.quotient(a)))
        } else {
            colour_ordering(&colour(a))
        };
        let pa = a.permuted(&ord.new_of_old);
        let mut pb = vec![0.0; a.n];
        for (old, &new) in ord.new_of_old.iter().enumerate() {
            pb[new] = b[old];
        }
        let l = ichol0(&pa).unwrap_or_else(|e| panic!("{e}"));
        let res = pcg(&pa, &pb, |r, z| l.apply(r, z), 1e-8, max_iter);
        assert!(res.converged, "not converged: {} iterations, residual {:e}", res.iterations, res.rel_residual);
        // Undo the permutation and check A x = b independently of pcg's own residual.
        let x: Vec<f64> = ord.new_of_old.iter().map(|&new| res.x[new]).collect();
        let rel = rel_residual(a, b, &x);
        assert!(rel <= 1.0001e-8, "residual {rel:e}");
        res.iterations
    }

    /// Plain CG (identity preconditioner) to 1e-8, checked; returns the iteration count.
    fn solve_plain(a: &SymMatrix, b: &[f64], max_iter: usize) -> usize {
        let res = pcg(a, b, |r, z| z.copy_from_slice(r), 1e-8, max_iter);
        assert!(res.converged, "plain CG: {} iterations, residual {:e}", res.iterations, res.rel_residual);
        assert!(rel_residual(a, b, &res.x) <= 1.0001e-8);
        res.iterations
    }

    #[test]
    fn real_matrices_load_with_readme_counts() {
        // file, order, stored lower entries, full nonzeros, pattern file
        let table = [
            ("1138_bus.mtx", 1138, 2596, 4054, false),
            ("can_1072.mtx", 1072, 6758, 12444, false),
            ("bcspwr10.mtx", 5300, 13571, 21842, true),
            ("bcsstk32.mtx.gz", 44609, 1029655, 2014701, true),
        ];
        for (name, n, lower, full, pattern) in table {
            let start = Instant::now();
            let (a, info) = read_matrix_market(&matrix_path(name)).unwrap_or_else(|e| panic!("{e}"));
            let secs = start.elapsed().as_secs_f64();
            println!("{name}: n {} nnz {} loaded in {secs:.3} s", a.n, a.nnz());
            a.check().unwrap();
            assert_eq!((a.n, info.n, info.entries_read, a.nnz(), info.pattern), (n, n, lower, full, pattern), "{name}");
            assert!(info.declared_symmetric);
            assert_eq!(info.field, if pattern { MtxField::Pattern } else { MtxField::Real });
            if pattern {
                assert_eq!(a, a.with_laplacian_values());
            }
            if name == "bcsstk32.mtx.gz" {
                assert!(secs < 2.0, "bcsstk32 took {secs:.2} s to load");
            }
        }
        // can_1072 stores explicit values, all 1 (not SPD as given).
        let can = load("can_1072.mtx");
        assert!(can.val.iter().all(|&v| v == 1.0));
        assert!(ichol0(&can).is_err());
    }

    #[test]
    fn gzip_is_detected_by_magic_not_name() {
        let dir = std::env::temp_dir().join(format!("commlab-sparse-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let plain = std::fs::read(matrix_path("1138_bus.mtx")).unwrap();
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, &plain).unwrap();
        let gz = enc.finish().unwrap();
        let cases = [("a.mtx.gz", &gz), ("gz-named-plain.mtx", &gz), ("plain-named-gz.mtx.gz", &plain)];
        let want = load("1138_bus.mtx");
        for (file, bytes) in cases {
            let p = dir.join(file);
            std::fs::write(&p, bytes).unwrap();
            let (a, info) = read_matrix_market(&p).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(a, want, "{file}");
            assert_eq!(info.entries_read, 2596);
        }
        // A corrupt gzip stream is an I/O error, not a panic.
        let mut bad = gz.clone();
        bad.truncate(gz.len() / 2);
        let p = dir.join("truncated.mtx.gz");
        std::fs::write(&p, &bad).unwrap();
        let e = read_matrix_market(&p).unwrap_err();
        assert!(e.line.is_none() && matches!(e.kind, MtxErrorKind::Io | MtxErrorKind::Eof), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn colouring_is_proper_and_deterministic() {
        let mats = [
            load("1138_bus.mtx"),
            load("can_1072.mtx"),
            load("bcspwr10.mtx"),
            fe_stiffness(2, 30).unwrap(),
            fe_stiffness(3, 10).unwrap(),
        ];
        for a in &mats {
            let c = colour(a);
            assert_proper_colouring(a, &c);
            assert_eq!(c, colour(a));
            let max_degree = (0..a.n).map(|i| a.degree(i)).max().unwrap();
            assert!((*c.iter().max().unwrap() as usize) <= max_degree);
        }
    }

    #[test]
    fn colouring_bcsstk32() {
        let a = load("bcsstk32.mtx.gz");
        let c = colour(&a);
        assert_proper_colouring(&a, &c);
        let scalar = c.iter().max().unwrap() + 1;
        // BCSSTK32 contains a 70-clique, so no colouring of the scalar graph has fewer colours.
        assert!(scalar >= 70, "{scalar} scalar colours");
        let groups = compress(&a);
        let compressed = check_compressed_colouring(&a, &groups);
        println!("bcsstk32: {scalar} colours scalar, {compressed} compressed ({} groups)", groups.groups());
        // The study's BlockSolve95 colouring of the compressed graph had 37 colours.
        assert!(compressed <= 40, "{compressed} colours on the compressed graph");
    }

    /// Checks the compression of `a` (a group's rows have one pattern; distinct groups, distinct
    /// patterns), colours its quotient graph and checks that colouring and its ordering: no
    /// quotient edge within a colour, and after renumbering each colour's diagonal block couples
    /// only unknowns of one group, which are consecutive. Returns the number of colours.
    fn check_compressed_colouring(a: &SymMatrix, groups: &Compression) -> usize {
        let mut first_of_pattern = std::collections::BTreeMap::new();
        for v in 0..a.n {
            let g = groups.group_of[v];
            assert_eq!(*first_of_pattern.entry(a.row(v).0.to_vec()).or_insert(g), g, "row {v}: grouping");
        }
        assert_eq!(first_of_pattern.len(), groups.groups(), "one group per distinct pattern");
        let q = groups.quotient(a);
        q.check().unwrap();
        assert_eq!(q.total_vwgt(), a.n as u64);
        let gc = colour_graph(&q);
        for g in 0..q.n() {
            assert!(q.edges(g).0.iter().all(|&h| gc[h as usize] != gc[g]), "group {g}: colour shared with a neighbour");
        }
        let ord = group_colour_ordering(groups, &gc);
        let old_of_new = invert_permutation(&ord.new_of_old).unwrap();
        let b = a.permuted(&ord.new_of_old);
        for w in ord.colour_ptr.windows(2) {
            for i in w[0]..w[1] {
                for &j in b.row(i).0.iter().filter(|&&j| (j as usize) >= w[0] && (j as usize) < w[1]) {
                    let (gi, gj) = (groups.group_of[old_of_new[i]], groups.group_of[old_of_new[j as usize]]);
                    assert_eq!(gi, gj, "coupling between groups inside a colour block");
                    assert!(i.abs_diff(j as usize) < groups.largest(), "a group's unknowns are consecutive");
                }
            }
        }
        ord.colour_ptr.len() - 1
    }

    #[test]
    fn compressed_colourings_of_the_small_matrices() {
        // Study (BlockSolve95): 1138_bus 5, can_1072 7, bcspwr10 4 colours. Greedy on the
        // quotient graph may use more; it can use no more than (max quotient degree + 1).
        for name in ["1138_bus.mtx", "can_1072.mtx", "bcspwr10.mtx"] {
            let a = load(name);
            let groups = compress(&a);
            let n = check_compressed_colouring(&a, &groups);
            let scalar = colour(&a).iter().max().unwrap() + 1;
            let q = groups.quotient(&a);
            let max_degree = (0..q.n()).map(|g| q.edges(g).0.len()).max().unwrap();
            println!("{name}: {} groups, {n} colours compressed, {scalar} scalar", groups.groups());
            assert!(n <= max_degree + 1);
        }
        // Scalar FE grids have no two identical rows (k >= 2): compression changes nothing and
        // they keep the classic 4 (2-D, 9-point) and 8 (3-D, 27-point) colours.
        for (dim, k, classic) in [(2, 30, 4), (3, 10, 8)] {
            let a = fe_stiffness(dim, k).unwrap();
            let groups = compress(&a);
            assert_eq!(groups, Compression::singletons(a.n));
            assert_eq!(check_compressed_colouring(&a, &groups), classic);
        }
    }

    #[test]
    fn partitioners_on_the_compressed_bcsstk32_and_small_matrices() {
        let parts = 32;
        for name in ["bcsstk32.mtx.gz", "1138_bus.mtx", "bcspwr10.mtx"] {
            let a = load(name);
            let groups = compress(&a);
            let q = groups.quotient(&a);
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            let random: Vec<usize> = (0..q.n()).map(|_| rng.random_range(0..parts)).collect();
            let mut cuts = Vec::new();
            for p in [Partitioner::Rsb, Partitioner::Metis, Partitioner::Natural] {
                let start = Instant::now();
                let part = p.partition(&q, parts).unwrap();
                let secs = start.elapsed().as_secs_f64();
                assert_eq!(part, p.partition(&q, parts).unwrap(), "{name} {p:?}: deterministic");
                let mut w = vec![0u64; parts];
                for (g, &x) in part.iter().enumerate() {
                    w[x] += q.vwgt[g];
                }
                let ideal = a.n as f64 / parts as f64;
                let imbalance = *w.iter().max().unwrap() as f64 / ideal;
                let cut = q.cut(&part);
                println!("{name} {p:?}: cut {cut} (random {}), imbalance {imbalance:.3}, {secs:.3} s", q.cut(&random));
                assert!(w.iter().all(|&x| x > 0), "{name} {p:?}: empty part");
                assert!(imbalance <= 1.1, "{name} {p:?}: imbalance {imbalance:.3} {w:?}");
                cuts.push(cut);
            }
            let (rsb, metis, natural) = (cuts[0], cuts[1], cuts[2]);
            // Both graph partitioners beat blocks of the numbering and a random assignment by
            // far; multilevel RSB+KL is in METIS's league (Chaco and METIS papers: within tens of
            // percent of each other).
            assert!(rsb < natural && metis < natural, "{name}: {cuts:?}");
            assert!(4 * rsb < q.cut(&random), "{name}: rsb {rsb}");
            assert!(2 * rsb < 3 * metis, "{name}: rsb {rsb} vs metis {metis}");
        }
    }

    #[test]
    fn partition_real_matrices() {
        for (name, nparts) in [("1138_bus.mtx", 8), ("bcspwr10.mtx", 16), ("can_1072.mtx", 4), ("bcsstk32.mtx.gz", 32)]
        {
            let a = load(name);
            let part = partition(&a, nparts).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(part, partition(&a, nparts).unwrap(), "{name}: not deterministic");
            let mut size = vec![0usize; nparts];
            for &p in &part {
                size[p] += 1;
            }
            let ideal = a.n as f64 / nparts as f64;
            let max = *size.iter().max().unwrap() as f64;
            assert!(size.iter().all(|&s| s > 0), "{name}: empty part {size:?}");
            assert!(max <= 1.05 * ideal + 1.0, "{name}: imbalance {:.3} {size:?}", max / ideal);
            let mut rng = ChaCha8Rng::seed_from_u64(7);
            let random: Vec<usize> = (0..a.n).map(|_| rng.random_range(0..nparts)).collect();
            let (cut, rcut) = (edge_cut(&a, &part), edge_cut(&a, &random));
            println!("{name}: {nparts} parts, imbalance {:.3}, cut {cut} vs random {rcut}", max / ideal);
            assert!(cut * 4 < rcut, "{name}: cut {cut} vs random {rcut}");
        }
    }

    #[test]
    fn fe_matrices_are_spd_and_solve() {
        for (dim, k, per_row) in [(2, 40, 9), (3, 12, 27)] {
            let a = fe_stiffness(dim, k).unwrap();
            a.check().unwrap();
            assert_eq!(a.n, (k + 1).pow(dim as u32));
            assert_eq!(a.nnz(), (3 * k + 1).pow(dim as u32));
            assert_eq!((0..a.n).map(|i| a.row(i).0.len()).max().unwrap(), per_row);
            let b = rough_rhs(&a);
            let plain = solve_plain(&a, &b, 10 * a.n);
            let l = ichol0(&a).unwrap();
            let natural = pcg(&a, &b, |r, z| l.apply(r, z), 1e-8, a.n);
            assert!(natural.converged && rel_residual(&a, &b, &natural.x) <= 1.0001e-8);
            let coloured = solve_multicoloured(&a, &b, a.n, false);
            println!(
                "FE {dim}-D k={k} n={}: CG {plain} its, IC(0) natural {} its, IC(0) multicolour {coloured} its",
                a.n, natural.iterations
            );
            assert!(natural.iterations < plain && coloured < plain);
            // CG needs O(1/h) = O(k) iterations on this problem; allow generous constants.
            assert!(plain <= 20 * k, "CG took {plain} iterations");
        }
    }

    #[test]
    fn iccg_on_real_matrices() {
        let can = load("can_1072.mtx").with_laplacian_values();
        for (name, a, max_iter) in [
            ("1138_bus", load("1138_bus.mtx"), 5000),
            ("can_1072 (laplacian values)", can, 2000),
            ("bcspwr10", load("bcspwr10.mtx"), 2000),
            ("bcsstk32", load("bcsstk32.mtx.gz"), 2000),
        ] {
            let b = rough_rhs(&a);
            let its = solve_multicoloured(&a, &b, max_iter, false);
            let compressed = solve_multicoloured(&a, &b, max_iter, true);
            let plain = solve_plain(&a, &b, 20_000);
            println!(
                "{name}: IC(0) multicolour {its} iterations, compressed multicolour {compressed}, plain CG {plain}"
            );
            assert!(its < plain && compressed < plain, "{name}: IC(0) {its}/{compressed} vs plain {plain}");
        }
    }

    /// Small valid inputs for the mutation test.
    const SEEDS: [&str; 3] = [
        "%%MatrixMarket matrix coordinate real symmetric\n% a comment\n5 5 9\n1 1 4.0\n2 1 -1\n2 2 4\n\
     3 2 -1.5e0\n3 3 4\n4 4 4\n5 3 -1\n5 5 4\n4 1 -0.5\n",
        "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 5\n1 1\n2 1\n3 2\n4 3\n4 1\n",
        "%%MatrixMarket matrix coordinate integer general\n3 3 5\n1 1 2\n2 1 -1\n1 2 -1\n\n2 2 2\n3 3 7\n",
    ];

    fn mutate(text: &mut Vec<u8>, rng: &mut ChaCha8Rng) {
        const BYTES: &[u8] = b"0123456789 \t\n\r-+.eE%xnaNDd\xff\xc3";
        const NUMBERS: [&str; 10] =
            ["99999999999999999999", "-3", "NaN", "inf", "0", "1e309", "4294967297", "6", "-0", "2.5"];
        let len = text.len();
        let pos = if len == 0 { 0 } else { rng.random_range(0..len) };
        let lines = |t: &[u8]| -> Vec<Vec<u8>> { t.split_inclusive(|&b| b == b'\n').map(<[u8]>::to_vec).collect() };
        match rng.random_range(0..8) {
            0 if len > 0 => {
                text.remove(pos);
            }
            1 => text.insert(pos, BYTES[rng.random_range(0..BYTES.len())]),
            2 if len > 0 => text[pos] = BYTES[rng.random_range(0..BYTES.len())],
            3 | 4 => {
                let mut ls = lines(text.as_slice());
                if !ls.is_empty() {
                    let i = rng.random_range(0..ls.len());
                    if rng.random_bool(0.5) {
                        let l = ls[i].clone();
                        ls.insert(i, l);
                    } else {
                        ls.remove(i);
                    }
                    *text = ls.concat();
                }
            }
            5 => text.truncate(pos),
            _ => {
                // Replace one whitespace-delimited token with a nasty number.
                let starts: Vec<usize> = (0..len)
                    .filter(|&i| !text[i].is_ascii_whitespace() && (i == 0 || text[i - 1].is_ascii_whitespace()))
                    .collect();
                if !starts.is_empty() {
                    let s = starts[rng.random_range(0..starts.len())];
                    let e = (s..len).find(|&i| text[i].is_ascii_whitespace()).unwrap_or(len);
                    let num = NUMBERS[rng.random_range(0..NUMBERS.len())];
                    text.splice(s..e, num.bytes());
                }
            }
        }
    }

    #[test]
    fn mutated_inputs_never_panic_and_errors_are_located() {
        let mut rng = ChaCha8Rng::seed_from_u64(0x5eed);
        let (mut ok, mut failed) = (0, 0);
        for case in 0..6000 {
            let mut text = SEEDS[case % SEEDS.len()].as_bytes().to_vec();
            for _ in 0..rng.random_range(1..=4) {
                mutate(&mut text, &mut rng);
            }
            let shown = String::from_utf8_lossy(&text).into_owned();
            let result = std::panic::catch_unwind(|| parse_matrix_market(&text[..], "fuzz.mtx"));
            match result {
                Err(_) => panic!("case {case} panicked on input:\n{shown}"),
                Ok(Ok((a, info))) => {
                    a.check().unwrap_or_else(|e| panic!("case {case}: invalid matrix ({e}) from:\n{shown}"));
                    assert_eq!(a.n, info.n);
                    ok += 1;
                }
                Ok(Err(e)) => {
                    let msg = e.to_string();
                    assert!(!msg.contains('\n'), "case {case}: multi-line error {msg:?}");
                    assert!(msg.starts_with("fuzz.mtx:"), "case {case}: {msg}");
                    match (e.line, e.kind) {
                        (Some(l), _) => assert!(l >= 1 && l <= text.len() + 1, "case {case}: line {l}"),
                        (None, MtxErrorKind::Eof) => assert!(e.message.starts_with("at end of input"), "{msg}"),
                        (None, MtxErrorKind::Io) => assert!(e.message.starts_with("I/O error"), "{msg}"),
                        (None, k) => panic!("case {case}: {k:?} error without a line: {msg}"),
                    }
                    failed += 1;
                }
            }
        }
        println!("mutations: {ok} parsed, {failed} rejected");
        assert!(ok > 100 && failed > 1000, "{ok} parsed, {failed} rejected: mutations too mild or too harsh");
    }

    mod properties {
        use commlab_apps::sparse::{colour, ichol0, invert_permutation, pcg, SymMatrix};
        use proptest::prelude::*;
        use rand::{Rng, SeedableRng};
        use rand_chacha::ChaCha8Rng;

        /// Random symmetric, strictly diagonally dominant (hence SPD) matrices.
        fn spd_matrix() -> impl Strategy<Value = SymMatrix> {
            (1usize..40).prop_flat_map(|n| {
                proptest::collection::vec((0..n, 0..n, -1.0f64..1.0), 0..(3 * n)).prop_map(move |raw| {
                    let mut seen = std::collections::BTreeSet::new();
                    let mut t: Vec<(usize, usize, f64)> =
                        raw.into_iter().filter(|&(i, j, _)| i != j && seen.insert((i.max(j), i.min(j)))).collect();
                    let mut rowsum = vec![0.0; n];
                    for &(i, j, v) in &t {
                        rowsum[i] += v.abs();
                        rowsum[j] += v.abs();
                    }
                    t.extend((0..n).map(|i| (i, i, rowsum[i] + 0.5)));
                    SymMatrix::from_triplets(n, &t).unwrap()
                })
            })
        }

        fn permutation_of(a: &SymMatrix, seed: u64) -> Vec<usize> {
            let mut p: Vec<usize> = (0..a.n).collect();
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            for i in (1..p.len()).rev() {
                p.swap(i, rng.random_range(0..=i));
            }
            p
        }

        proptest! {
            #![proptest_config(ProptestConfig {
                cases: 200,
                rng_seed: proptest::test_runner::RngSeed::Fixed(0x005b_a75e),
                failure_persistence: None,
                ..ProptestConfig::default()
            })]

            #[test]
            fn permutation_round_trips(a in spd_matrix(), seed in any::<u64>()) {
                let p = permutation_of(&a, seed);
                let b = a.permuted(&p);
                prop_assert!(b.check().is_ok());
                prop_assert_eq!(b.permuted(&invert_permutation(&p).unwrap()), a.clone());
                let x: Vec<f64> = (0..a.n).map(|i| i as f64 + 1.0).collect();
                let (mut ax, mut bpx) = (vec![0.0; a.n], vec![0.0; a.n]);
                a.mul_vec(&x, &mut ax);
                let mut px = vec![0.0; a.n];
                for i in 0..a.n { px[p[i]] = x[i]; }
                b.mul_vec(&px, &mut bpx);
                for i in 0..a.n { prop_assert!((bpx[p[i]] - ax[i]).abs() <= 1e-12 * ax[i].abs().max(1.0)); }
            }

            #[test]
            fn colouring_is_proper(a in spd_matrix()) {
                let c = colour(&a);
                for i in 0..a.n {
                    for &j in a.row(i).0 {
                        prop_assert!(j as usize == i || c[i] != c[j as usize]);
                    }
                }
            }

            #[test]
            fn ic0_reproduces_a_on_pattern_and_pcg_solves(a in spd_matrix()) {
                let l = ichol0(&a).unwrap();
                let n = a.n;
                let mut dense = vec![vec![0.0; n]; n];
                for (i, row) in dense.iter_mut().enumerate() {
                    for p in l.row_ptr[i]..l.row_ptr[i + 1] {
                        row[l.col[p] as usize] = l.val[p];
                    }
                }
                for i in 0..n {
                    let (c, v) = a.row(i);
                    for (&j, &x) in c.iter().zip(v) {
                        let llt: f64 = (0..n).map(|k| dense[i][k] * dense[j as usize][k]).sum();
                        prop_assert!((llt - x).abs() <= 1e-12 * x.abs().max(1.0));
                    }
                }
                let b: Vec<f64> = (0..n).map(|i| (i as f64).cos()).collect();
                let r = pcg(&a, &b, |r, z| l.apply(r, z), 1e-10, 10 * n + 10);
                prop_assert!(r.converged);
            }
        }
    }
}
