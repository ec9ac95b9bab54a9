//! Recording the 3D view as a numbered PNG sequence (`frame-00001.png`, …) in a fresh
//! `drape-rec-<unix time>/` folder, one file per **solver frame** (60 per simulated second at
//! the default Δt), whatever the render rate: a rendered frame that ran three solver frames is
//! written as three files, a paused one as none, so the sequence played at 1/Δt frames a
//! second runs at the simulation's speed. With `ffmpeg` on the PATH the sequence is also
//! encoded to `drape-rec-<time>.mp4` when the recording stops.
//!
//! Encoding a PNG takes longer than a frame, so a worker thread writes the files: the loop
//! hands it each rendered image through a bounded queue. When the queue is full the window does
//! not wait: the new image's solver frames are written as repeats of the image still waiting
//! (the count is reported at the end), so the sequence keeps one file per solver frame.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::thread::JoinHandle;

/// Frames waiting for the encoder before new ones are skipped.
const QUEUE: usize = 8;

/// One captured image: RGBA rows top to bottom, written as files `first`, `first + 1`, …,
/// `first + copies − 1`.
struct Picture {
    folder: PathBuf,
    first: u32,
    copies: u32,
    width: u32,
    height: u32,
    rgba: Vec<u8>,
}

/// A recording in progress.
pub struct Recorder {
    folder: PathBuf,
    frames: u32,
    /// Solver frames written as repeats of an earlier image (the encoder was busy).
    repeated: u32,
    /// An image the queue had no room for, with the frames it stands for so far.
    waiting: Option<Picture>,
    queue: Option<SyncSender<Picture>>,
    worker: Option<JoinHandle<Result<(), String>>>,
}

/// The file of frame `index` (1-based) in `folder`.
pub fn frame_path(folder: &Path, index: u32) -> PathBuf {
    folder.join(format!("frame-{index:05}.png"))
}

/// The `width` × `height` rectangle at (`x`, `y`) of an RGBA image `image_width` wide
/// (clamped to the image).
pub fn crop(rgba: &[u8], image_width: usize, (x, y, width, height): (usize, usize, usize, usize)) -> Vec<u8> {
    let image_height = rgba.len() / (4 * image_width.max(1));
    let (x, y) = (x.min(image_width), y.min(image_height));
    let (width, height) = (width.min(image_width - x), height.min(image_height - y));
    let mut out = Vec::with_capacity(width * height * 4);
    for row in rgba.chunks_exact(image_width * 4).skip(y).take(height) {
        out.extend_from_slice(&row[x * 4..(x + width) * 4]);
    }
    out
}

fn encode(pictures: Receiver<Picture>) -> Result<(), String> {
    for p in pictures {
        let path = frame_path(&p.folder, p.first);
        super::write_png(&path, &p.rgba, p.width, p.height).map_err(|e| format!("writing {}: {e}", path.display()))?;
        for index in p.first + 1..p.first + p.copies {
            let copy = frame_path(&p.folder, index);
            std::fs::copy(&path, &copy).map_err(|e| format!("writing {}: {e}", copy.display()))?;
        }
    }
    Ok(())
}

/// Encodes the frames in `folder` into `<folder>.mp4` with ffmpeg at `frames_per_second`;
/// None when ffmpeg is not on the PATH.
fn encode_video(folder: &Path, frames_per_second: f64) -> Option<Result<PathBuf, String>> {
    let video = folder.with_extension("mp4");
    let run = std::process::Command::new("ffmpeg")
        .args(["-loglevel", "error", "-y", "-framerate", &format!("{frames_per_second}"), "-i"])
        .arg(folder.join("frame-%05d.png"))
        // H.264 in yuv420p (what players accept) needs even sides.
        .args(["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-pix_fmt", "yuv420p"])
        .arg(&video)
        .output();
    match run {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(Err(format!("ffmpeg: {e}"))),
        Ok(out) if out.status.success() => Some(Ok(video)),
        Ok(out) => Some(Err(format!("ffmpeg: {}", String::from_utf8_lossy(&out.stderr).trim()))),
    }
}

impl Recorder {
    /// Starts recording into a new folder `drape-rec-<stamp>` under `parent`.
    pub fn start(parent: &Path, stamp: u64) -> std::io::Result<Self> {
        let folder = parent.join(format!("drape-rec-{stamp}"));
        std::fs::create_dir_all(&folder)?;
        let (queue, pictures) = mpsc::sync_channel(QUEUE);
        let worker = std::thread::Builder::new()
            .name("drape-recorder".into())
            .spawn(move || encode(pictures))?;
        Ok(Self {
            folder,
            frames: 0,
            repeated: 0,
            waiting: None,
            queue: Some(queue),
            worker: Some(worker),
        })
    }

    /// The folder the frames go to.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Solver frames recorded so far (files written or to be written).
    pub fn frames(&self) -> u32 {
        self.frames
    }

    /// Adds the view (RGBA rows top to bottom) for the `solver_frames` solver frames that ran
    /// in this rendered frame (none while paused: no file). When the encoder is behind, these
    /// frames repeat the image already waiting instead.
    pub fn add(&mut self, width: u32, height: u32, rgba: Vec<u8>, solver_frames: u32) {
        if solver_frames == 0 || self.queue.is_none() {
            return;
        }
        let first = self.frames + 1;
        self.frames += solver_frames;
        match self.waiting.as_mut() {
            Some(waiting) => {
                waiting.copies += solver_frames;
                self.repeated += solver_frames;
            }
            None => {
                self.waiting = Some(Picture {
                    folder: self.folder.clone(),
                    first,
                    copies: solver_frames,
                    width,
                    height,
                    rgba,
                })
            }
        }
        self.send_waiting();
    }

    /// Hands the waiting image to the encoder if it has room.
    fn send_waiting(&mut self) {
        let (Some(queue), Some(picture)) = (&self.queue, self.waiting.take()) else {
            return;
        };
        match queue.try_send(picture) {
            Ok(()) => {}
            Err(TrySendError::Full(picture)) => self.waiting = Some(picture),
            Err(TrySendError::Disconnected(_)) => self.queue = None,
        }
    }

    /// Waits for the encoder (and ffmpeg, when present, encoding at `frames_per_second`) and
    /// returns a summary for the status line.
    pub fn finish(mut self, frames_per_second: f64) -> Result<String, String> {
        if let (Some(queue), Some(picture)) = (&self.queue, self.waiting.take()) {
            queue.send(picture).map_err(|_| "the encoder stopped".to_string())?;
        }
        self.queue = None; // closes the channel: the worker ends after the last frame
        let outcome = self
            .worker
            .take()
            .map_or(Ok(()), |w| w.join().unwrap_or_else(|_| Err("the encoder thread panicked".into())));
        outcome?;
        let repeated = match self.repeated {
            0 => String::new(),
            n => format!(" ({n} repeat the previous image: the encoder was busy)"),
        };
        let video = match (self.frames, encode_video(&self.folder, frames_per_second)) {
            (0, _) => String::new(),
            (_, None) => " · no ffmpeg on the PATH for a video".into(),
            (_, Some(Ok(video))) => format!(" and {}", video.display()),
            (_, Some(Err(why))) => format!(" · video failed: {why}"),
        };
        Ok(format!(
            "recorded {} solver frames to {}/{repeated}{video}",
            self.frames,
            self.folder.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35: one file per solver frame: rendered frames that ran 1, 3, 0 and 2 solver
    /// frames give 6 files, the second image three times, the paused frame none.
    #[test]
    fn one_png_is_written_per_solver_frame() {
        let dir = tempfile::tempdir().unwrap();
        let mut recorder = Recorder::start(dir.path(), 42).unwrap();
        for (shade, solver_frames) in [(0u8, 1), (100, 3), (150, 0), (200, 2)] {
            recorder.add(4, 3, [shade, shade, shade, 255].repeat(12), solver_frames);
        }
        let folder = recorder.folder().to_path_buf();
        assert_eq!(folder, dir.path().join("drape-rec-42"));
        let summary = recorder.finish(60.0).unwrap();
        assert!(summary.starts_with("recorded 6 solver frames"), "{summary}");
        let shade_of = |index| image::open(frame_path(&folder, index)).unwrap().to_rgba8().get_pixel(1, 1).0[0];
        let shades: Vec<u8> = (1..=6).map(shade_of).collect();
        assert_eq!(shades, [0, 100, 100, 100, 200, 200]);
        assert!(!frame_path(&folder, 7).exists());
    }

    /// A recorder whose encoder is behind never drops a solver frame: 40 rendered frames of
    /// 2 solver frames each, of images large enough that encoding lags (1 MB each, handed over
    /// far faster than PNG-encoded, past the 8-image queue), give 80 files, some repeating an
    /// earlier image byte for byte, and the summary says how many repeat.
    #[test]
    fn a_busy_encoder_repeats_images_instead_of_dropping_frames() {
        let dir = tempfile::tempdir().unwrap();
        let mut recorder = Recorder::start(dir.path(), 7).unwrap();
        let side = 512usize;
        for k in 0..40u32 {
            let noise = (0..side * side).flat_map(|i| [(i as u32 * 31 + k * 17) as u8, k as u8, (i / side) as u8, 255]);
            recorder.add(side as u32, side as u32, noise.collect(), 2);
        }
        let folder = recorder.folder().to_path_buf();
        let summary = recorder.finish(60.0).unwrap();
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 80);
        assert!(summary.contains("repeat the previous image"), "the queue never filled: {summary}");
        let bytes = |index| std::fs::read(frame_path(&folder, index)).unwrap();
        let repeats = (2..=80).filter(|&k| bytes(k) == bytes(k - 1)).count();
        assert!(
            repeats >= 40,
            "each image is written for its 2 solver frames, and more when busy: {repeats}"
        );
    }

    /// With ffmpeg on the PATH, stopping encodes the frames into `<folder>.mp4`.
    #[test]
    fn ffmpeg_when_present_encodes_a_video_of_the_frames() {
        let dir = tempfile::tempdir().unwrap();
        let mut recorder = Recorder::start(dir.path(), 9).unwrap();
        for shade in 0..30u8 {
            recorder.add(33, 17, [shade * 8, 0, 0, 255].repeat(33 * 17), 1);
        }
        let summary = recorder.finish(60.0).unwrap();
        let video = dir.path().join("drape-rec-9.mp4");
        if summary.contains("no ffmpeg") {
            eprintln!("ffmpeg_when_present…: no ffmpeg on the PATH, checked the message only");
            assert!(!video.exists());
            return;
        }
        assert!(summary.ends_with(&format!("and {}", video.display())), "{summary}");
        assert!(std::fs::metadata(&video).unwrap().len() > 0);
    }

    #[test]
    fn crop_takes_the_view_rectangle() {
        // A 4 × 3 image whose pixel (x, y) has red = 10 x + y.
        let image: Vec<u8> = (0..3).flat_map(|y| (0..4).flat_map(move |x| [10 * x + y, 0, 0, 255])).collect();
        let cut = crop(&image, 4, (1, 1, 2, 2));
        let reds: Vec<u8> = cut.chunks(4).map(|p| p[0]).collect();
        assert_eq!(reds, [11, 21, 12, 22]);
        assert_eq!(crop(&image, 4, (3, 2, 5, 5)).len(), 4, "clamped to the image");
    }
}
