//! Checkpoints: everything a run needs to go on where it was, written
//! atomically to `checkpoint.bin` in its output directory and read back by
//! `repose run --resume DIR`.
//!
//! **What is in it.** The state that changes during a run and is not
//! rebuilt from the scene: the bodies (every array, so spheres that inlets
//! emitted are in it), the boundaries' positions (a moving wall's origin
//! advances every step), the simulated time and step counter, the
//! warm-start impulses, each inlet's progress (count, generator state,
//! deferrals), the
//! analysis accumulators (settling detector, drum samples), the summary so
//! far, the list of frames written and the length of `track.csv`, and the
//! options the run was started with. Everything fixed (materials,
//! boundaries, settings) comes from the run's own `scene.ron`, whose text is
//! kept in the checkpoint too: a `scene.ron` edited since is refused.
//! The stepper keeps no state between steps that changes the numbers (its
//! thread choice does not: serial and parallel passes give the same bits). So on the CPU backend a resumed run's `final.csv` is
//! bit-identical to an uninterrupted run's (`tests/checkpoint.rs`).
//!
//! **Format.** The 8 bytes `REPOSECK`, a little-endian `u32` format
//! version ([`FORMAT_VERSION`]), then the [`Checkpoint`] in postcard's
//! serde encoding (a compact, documented binary format; each `f64` is its 8
//! bytes, so every number comes back bit for bit). The summary travels as
//! JSON text inside it, since its open `extra` map needs a self-describing
//! format (serde_json reads floats back exactly with its `float_roundtrip`
//! feature). A checkpoint is about 130 bytes per sphere plus 58 per
//! warm-started contact: 3.2 MB for the 10,648 spheres and 32,912 contacts
//! of `scenes/bench_pile.ron`.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::analysis::{DischargeSampler, DrumSampler, SettleDetector};
use crate::output::write_atomic;
use crate::state::State;

use super::backend::BackendChoice;

/// The checkpoint's file name in a run's output directory.
pub const CHECKPOINT_FILE: &str = "checkpoint.bin";

/// The first bytes of every checkpoint file.
const MAGIC: &[u8; 8] = b"REPOSECK";

/// Version of the layout of [`Checkpoint`]; a file of another version is
/// refused with both numbers. The file is the 8 bytes `REPOSECK`, this version
/// (u32, little-endian), the CRC-32 of the body (u32, little-endian) and
/// the body (postcard): a changed byte anywhere in the body fails the
/// checksum and the file is refused as damaged.
pub const FORMAT_VERSION: u32 = 5;

/// Everything `repose run --resume` needs besides the run's `scene.ron`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The repose version that wrote it (a resume by another version is
    /// refused: the numbers could differ).
    pub repose_version: String,
    /// The text of the run's `scene.ron` when the run started.
    pub scene_ron: String,
    /// How the run was started.
    pub options: StartOptions,
    /// The simulation state ([`State`]: the same parts the step loop
    /// keeps to undo a step).
    pub world: State,
    /// The settling detector, when detection is on.
    pub settle: Option<SettleDetector>,
    /// The drum sampler, when the scene measures a drum.
    pub drum: Option<DrumSampler>,
    /// The discharge sampler, when the scene measures a discharge.
    pub discharge: Option<DischargeSampler>,
    /// The summary so far (JSON text: see the module docs), with the stage
    /// times and wall time up to the checkpoint.
    pub summary_json: String,
    /// The frames written so far (time, file name), when frames are written.
    pub frames: Option<Vec<(f64, String)>>,
    /// The length of `track.csv` (bytes) at the checkpoint, when tracking.
    pub track_len: Option<u64>,
}

/// The options of `repose run` that a resumed run keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StartOptions {
    /// The backend asked for.
    pub backend: BackendChoice,
    /// No VTU frames.
    pub no_frames: bool,
    /// No `final.png`.
    pub no_picture: bool,
    /// Steps whose problem is written out (from the command line).
    pub dump_steps: Vec<u64>,
}

/// Writes `ck` to `path` atomically (a temporary, then a rename: a run
/// killed while writing leaves the previous checkpoint whole); returns the
/// file's size in bytes.
pub fn write_checkpoint(path: &Path, ck: &Checkpoint) -> Result<u64> {
    let body = postcard::to_stdvec(ck)
        .with_context(|| format!("cannot encode the checkpoint {}", path.display()))?;
    let crc = crc32fast::hash(&body);
    write_atomic(path, |w| {
        w.write_all(MAGIC)?;
        w.write_all(&FORMAT_VERSION.to_le_bytes())?;
        w.write_all(&crc.to_le_bytes())?;
        w.write_all(&body)
    })
    .with_context(|| format!("cannot write the checkpoint {}", path.display()))?;
    Ok((MAGIC.len() + 8 + body.len()) as u64)
}

/// Whether the file at `path` starts as a checkpoint does (its first
/// eight bytes); false where it cannot be read.
pub fn is_checkpoint(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == MAGIC
}

/// Reads a checkpoint; errors name the file and say what is wrong with it
/// (not a checkpoint, another format version, cut short or damaged).
pub fn read_checkpoint(path: &Path) -> Result<Checkpoint> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read checkpoint {}", path.display()))?;
    let Some(rest) = bytes.strip_prefix(MAGIC) else {
        anyhow::bail!(
            "{}: not a repose checkpoint (it does not start with {:?})",
            path.display(),
            std::str::from_utf8(MAGIC).unwrap_or_default()
        );
    };
    let Some((version, body)) = rest.split_first_chunk::<4>() else {
        anyhow::bail!(
            "{}: the checkpoint ends early (no format version)",
            path.display()
        );
    };
    let version = u32::from_le_bytes(*version);
    anyhow::ensure!(
        version == FORMAT_VERSION,
        "{}: checkpoint format version {version}, but this repose reads version {FORMAT_VERSION}",
        path.display()
    );
    let Some((crc, body)) = body.split_first_chunk::<4>() else {
        anyhow::bail!(
            "{}: the checkpoint ends early (no checksum)",
            path.display()
        );
    };
    let (want, got) = (u32::from_le_bytes(*crc), crc32fast::hash(body));
    anyhow::ensure!(
        want == got,
        "{}: the checkpoint is damaged or cut short (its CRC-32 is {got:#010x}, the file says {want:#010x}): it cannot be trusted; an earlier copy, or a rerun, is needed",
        path.display()
    );
    let (ck, left) = postcard::take_from_bytes::<Checkpoint>(body).map_err(|e| {
        anyhow::anyhow!(
            "{}: the checkpoint is damaged or cut short ({e})",
            path.display()
        )
    })?;
    anyhow::ensure!(
        left.is_empty(),
        "{}: the checkpoint has {} bytes of trailing garbage",
        path.display(),
        left.len()
    );
    Ok(ck)
}

/// When the next checkpoint is due (`output.checkpoint`).
#[derive(Clone, Debug)]
pub(super) struct CheckpointClock {
    every_seconds: Option<f64>,
    every_steps: Option<u64>,
    last_step: u64,
    last_time: std::time::Instant,
}

impl CheckpointClock {
    /// A clock that last fired at step `step`, now.
    pub fn new(s: &crate::scene::schema::CheckpointSettings, step: u64) -> Option<Self> {
        s.enabled.then(|| CheckpointClock {
            every_seconds: s.every_seconds,
            every_steps: s.every_steps,
            last_step: step,
            last_time: std::time::Instant::now(),
        })
    }

    /// Whether a checkpoint is due after step `step`; if so the clock
    /// restarts there.
    pub fn due(&mut self, step: u64) -> bool {
        let by_steps = self.every_steps.is_some_and(|n| step >= self.last_step + n);
        let by_time = self
            .every_seconds
            .is_some_and(|t| self.last_time.elapsed().as_secs_f64() >= t);
        if by_steps || by_time {
            self.last_step = step;
            self.last_time = std::time::Instant::now();
        }
        by_steps || by_time
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::{Bodies, SphereInit};
    use crate::formulation::penalty::ContactHistory;
    use crate::state::WarmImpulse;
    use crate::world::World;
    use glam::DVec3;

    fn sample() -> Checkpoint {
        let mut bodies = Bodies::default();
        bodies.push(&SphereInit {
            pos: DVec3::new(0.1, -0.2, 1.0 / 3.0),
            radius: 0.01,
            mass: 1e-3,
            inertia: 4e-8,
            vel: DVec3::new(f64::MIN_POSITIVE, -0.0, 1e300),
            omega: DVec3::new(0.5, 0.25, -7.0),
            material: 0,
        });
        Checkpoint {
            repose_version: "x".into(),
            scene_ron: "(name: \"s\")".into(),
            options: StartOptions {
                backend: BackendChoice::Cpu,
                no_frames: false,
                no_picture: true,
                dump_steps: vec![3, 9],
            },
            world: State {
                bodies,
                time: 0.1 + 0.2,
                step_index: 300,
                boundary_origins: vec![DVec3::new(0.0, 0.0, 0.1 + 0.2)],
                boundary_rotations: vec![glam::DQuat::IDENTITY],
                warm: std::collections::HashMap::from([(
                    42,
                    WarmImpulse {
                        force: DVec3::new(1e-9, 2.0, 3.0),
                        torque: DVec3::new(-1.0, 0.0, std::f64::consts::PI),
                    },
                )]),
                contact_history: vec![(
                    7,
                    ContactHistory {
                        slide: crate::formulation::penalty::SlideHistory {
                            deflection: DVec3::new(1e-7, -3e-8, 0.1 + 0.2),
                            slipping: true,
                        },
                        roll: [
                            crate::formulation::penalty::RollHistory {
                                deflection: DVec3::new(0.0, 1e-300, -2.5e-6),
                                slipping: false,
                            },
                            Default::default(),
                        ],
                        spin: crate::formulation::penalty::SpinHistory {
                            deflection: -0.1 - 0.2,
                            slipping: true,
                        },
                        point: Some(DVec3::new(1.0, 2.0, 1e-17)),
                    },
                )],
                inlets: Vec::new(),
            },
            settle: None,
            drum: None,
            discharge: None,
            summary_json: "{\"x\": 0.30000000000000004}".into(),
            frames: Some(vec![(0.0, "frame_00000.vtu".into())]),
            track_len: Some(1234),
        }
    }

    /// A contact key twice in a checkpoint's histories is named, not
    /// restored (the world keeps one history per key, sorted).
    #[test]
    fn a_contact_history_key_twice_is_named() {
        let mut state = sample().world;
        state.boundary_origins.clear();
        state.boundary_rotations.clear();
        let again = state.contact_history[0];
        state.contact_history.push(again);
        let mut world = World::new(Bodies::default(), Vec::new(), Vec::new());
        let err = world.restore(&state).expect_err("a key twice");
        assert!(world.state.bodies.is_empty(), "nothing restored");
        assert!(
            err.to_string().contains("key 0x7 twice"),
            "the error names the key: {err}"
        );
    }

    #[test]
    fn checkpoint_round_trips_every_bit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(CHECKPOINT_FILE);
        let ck = sample();
        let size = write_checkpoint(&path, &ck).unwrap();
        assert_eq!(size, std::fs::metadata(&path).unwrap().len());
        let back = read_checkpoint(&path).unwrap();
        assert_eq!(back.world, ck.world);
        assert_eq!(back.options, ck.options);
        assert_eq!(back.frames, ck.frames);
        assert_eq!(back.track_len, ck.track_len);
        assert_eq!(back.summary_json, ck.summary_json);
        // -0.0 == 0.0 under PartialEq: compare the bits too.
        assert_eq!(
            back.world.bodies.vel[0].y.to_bits(),
            ck.world.bodies.vel[0].y.to_bits()
        );
    }

    #[test]
    fn damaged_checkpoints_are_named_not_misread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(CHECKPOINT_FILE);
        write_checkpoint(&path, &sample()).unwrap();
        let good = std::fs::read(&path).unwrap();
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"PK\x03\x04 not ours".to_vec(), "not a repose checkpoint"),
            (good[..10].to_vec(), "ends early"),
            (
                [&good[..8], &7u32.to_le_bytes()[..], &good[12..]].concat(),
                "format version 7",
            ),
            (good[..good.len() - 5].to_vec(), "damaged or cut short"),
            // Appended bytes are part of the body the checksum covers.
            ([&good[..], b"xx"].concat(), "damaged or cut short"),
        ];
        for (bytes, want) in cases {
            std::fs::write(&path, &bytes).unwrap();
            let err = format!("{:#}", read_checkpoint(&path).unwrap_err());
            assert!(err.contains(want), "expected {want:?} in: {err}");
            assert!(err.contains("checkpoint.bin"), "no file name in: {err}");
        }
        // Every single-bit flip is refused, wherever it falls: in the
        // magic, the version, the checksum or the numbers of the body
        // (without the checksum, a flip in a number read back as another
        // number).
        for k in 0..8 * good.len() {
            let mut bytes = good.clone();
            bytes[k / 8] ^= 1 << (k % 8);
            std::fs::write(&path, &bytes).unwrap();
            assert!(
                read_checkpoint(&path).is_err(),
                "bit {} of byte {} flipped: read as a checkpoint",
                k % 8,
                k / 8
            );
        }
    }
}
