# Reference values from R's psych package (Debian: r-cran-psych) for tests/core/reliability.
# Run by make_reference.py (or by the live test when Rscript is there):
#   Rscript psych_reference.R <folder with one CSV per case> <output CSV>
# Each input CSV has one row per unit and one column per rater, NA for a missing rating.
# Per case it runs, with every digit kept (format(..., digits = 15)):
#   psych::ICC(na.omit(x), lmer = FALSE)             - ICC2 (ICC(2,1)), ICC2k, ICC3 with bounds
#   psych::cohen.kappa(x[, 1:2], levels = scale)      - Cohen's kappa and its bounds
#   psych::cohen.kappa(x[, 1:2], w = W, levels = scale) - weighted kappa, W = 1 - d / max(d)
#     (linear) or 1 - d^2 / max(d)^2 (quadratic), d = |value_i - value_j| over the scale
suppressPackageStartupMessages(library(psych))
args <- commandArgs(trailingOnly = TRUE)
folder <- args[1]
out <- args[2]
rows <- list()
add <- function(case, statistic, value, low, high) {
  rows[[length(rows) + 1]] <<- data.frame(case = case, statistic = statistic,
    value = format(value, digits = 15), low = format(low, digits = 15),
    high = format(high, digits = 15))
}
for (path in list.files(folder, pattern = "\\.csv$", full.names = TRUE)) {
  case <- sub("\\.csv$", "", basename(path))
  x <- as.matrix(read.csv(path, header = TRUE, na.strings = "NA"))
  scale_path <- file.path(folder, paste0(case, ".scale"))
  scale <- if (file.exists(scale_path)) scan(scale_path, quiet = TRUE) else sort(unique(as.vector(x)))
  if (file.exists(scale_path)) {
    complete <- x[stats::complete.cases(x), , drop = FALSE]
    if (nrow(complete) >= 2 && length(unique(as.vector(complete))) > 1) {
      r <- ICC(complete, lmer = FALSE)$results  # psych refuses missing data: listwise, as we do
      add(case, "icc_2_1", r["Single_random_raters", "ICC"], r["Single_random_raters", "lower bound"], r["Single_random_raters", "upper bound"])
      add(case, "icc_2_k", r["Average_random_raters", "ICC"], r["Average_random_raters", "lower bound"], r["Average_random_raters", "upper bound"])
      add(case, "icc_3_1", r["Single_fixed_raters", "ICC"], r["Single_fixed_raters", "lower bound"], r["Single_fixed_raters", "upper bound"])
    }
  }
  if (ncol(x) == 2) {
    pair <- x[stats::complete.cases(x), , drop = FALSE]
    k <- cohen.kappa(pair, levels = scale)
    add(case, "cohen_kappa", k$confid[1, 2], k$confid[1, 1], k$confid[1, 3])
    if (file.exists(scale_path)) {
      d <- abs(outer(scale, scale, "-"))
      for (kind in c("linear", "quadratic")) {
        W <- if (kind == "linear") 1 - d / max(d) else 1 - d^2 / max(d)^2
        k <- cohen.kappa(pair, w = W, levels = scale)
        add(case, paste0("weighted_kappa_", kind), k$confid[2, 2], k$confid[2, 1], k$confid[2, 3])
      }
    }
  }
}
write.csv(do.call(rbind, rows), out, row.names = FALSE)
