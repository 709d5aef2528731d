package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// writePlot draws p50 and p99 latency (log scale) against offered load,
// with the p99 bound as a dashed line, and writes it as a PNG.
func writePlot(path, title string, steps []result, bound time.Duration) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "offered load (requests/s)"
	p.Y.Label.Text = "latency (ms, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.TickerFunc(logTicks)
	p.X.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		ticks := plot.DefaultTicks{}.Ticks(lo, hi)
		for i := range ticks {
			if ticks[i].Label != "" { // "250", not "250.00"
				ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', -1, 64)
			}
		}
		return ticks
	})
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true

	series := []struct {
		name  string
		of    func(result) time.Duration
		color color.Color
		shape draw.GlyphDrawer
	}{
		{"p50", func(r result) time.Duration { return r.p50 }, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, draw.CircleGlyph{}},
		{"p99", func(r result) time.Duration { return r.p99 }, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, draw.TriangleGlyph{}},
	}
	lo, hi := float64(bound)/float64(time.Millisecond), float64(bound)/float64(time.Millisecond)
	for _, s := range series {
		xys := make(plotter.XYs, len(steps))
		for i, r := range steps {
			v := float64(s.of(r)) / float64(time.Millisecond)
			xys[i] = plotter.XY{X: float64(r.rate), Y: max(v, 0.01)}
			lo, hi = min(lo, xys[i].Y), max(hi, xys[i].Y)
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		line.Color, points.Color = s.color, s.color
		line.Width = vg.Points(1.5)
		points.Shape = s.shape
		p.Add(line, points)
		p.Legend.Add(s.name, line, points)
	}
	if bound > 0 {
		boundMs := float64(bound) / float64(time.Millisecond)
		f := plotter.NewFunction(func(float64) float64 { return boundMs })
		f.Color = color.Gray{Y: 0x60}
		f.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(f)
		p.Legend.Add(fmt.Sprintf("p99 bound %s", bound), f)
	}
	p.Y.Min, p.Y.Max = lo/1.5, hi*1.5
	p.X.Min = 0
	p.X.Max = float64(steps[len(steps)-1].rate) * 1.05
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

// logTicks labels 1, 2 and 5 of each decade (LogTicks labels only powers
// of ten, too few for latencies between 1 and 500 ms).
func logTicks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for decade := math.Pow(10, math.Floor(math.Log10(lo))); decade <= hi; decade *= 10 {
		for m := 1; m <= 9; m++ {
			v := float64(m) * decade
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
