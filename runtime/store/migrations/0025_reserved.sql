-- Number 0025 is taken by work on another branch (coordinated: this branch uses 0026). Migrations
-- must be numbered without gaps, so this file holds the place; the branch that brings the real
-- 0025 replaces it when the two meet.
SELECT 1;
